#!/bin/bash
# Lead, session 46, run 4 — RUN at 09:32 UTC on an H100 (bundles at 367ecd9; results in PERF "Session 46"). One call, ≤ 330 s or $BUDGET: every GPU test the whole check leaves out. Run 2 found two
# of them stale (TestCUDAExpertCacheHotSet, TestBenchJSONSaysItsUnits: not run since the sessions that changed what
# they judge); b87e742 mends them. So: every test of proscenium-gpu.test (the worker's engine on the GPU), and the 60
# tests of cuda.test outside run-lib.sh's list (kernels beside their references, the sampler against the CPU, the pool,
# the load's bytes; the timing probes among them skip or log), under fast and exact at once; then, on an H200, the
# Current figures' benches (table_benches).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run4 ${BUDGET:-330} .carry-fa .carry-fb
LEFT='^(TestAttentionDecodeRefusesExact|TestAttentionDecodeTiming|TestAttentionFlashTiming|TestBackboneAdmission|TestBackboneRowsAndAddNorm|TestBandwidth|TestChainProbe|TestCodecEncoderRefuses|TestCopyRows|TestDeltaNetChunkStateTiled|TestDeltaNetChunkStateTiming|TestDeltaNetChunkTiming|TestDeltaNetChunkedMatchesRecurrent|TestDeltaNetClusterTiming|TestDeltaNetPromptPassBits|TestDependentChain|TestEmbedGather|TestFusedAttention|TestFusedDeltaNetStep|TestFusedDenseRoute|TestFusedDownCombine|TestFusedOutAddNorm|TestGatherBF16Rows|TestGemmBF16|TestGemmF16|TestGemmFP8|TestGemmFP8Codes|TestGemmFastSpeed|TestGemmGrouped|TestGemmMmaVariants|TestGemmStreamSpeed|TestGemmWide|TestGemmXPartsRouting|TestGemmXPartsSpeed|TestGemmXPartsTailSplit|TestGemvBF16|TestGemvRowsBandwidth|TestMixerTiming|TestMoECombineNorm|TestMoEDown2Timing|TestMoEGroupTiming|TestMoERoute|TestMoERowsGEMV|TestModelBytesMatchesTheLoad|TestNormCluster|TestNormClusterExistingTests|TestNormClusterTiming|TestPoolOnDevice|TestRMSNormZeroCentred|TestSamplerFrameDraw|TestSamplerLeanEmbed|TestSamplerLeanMatchesWarpPick|TestSamplerLeanTable|TestSamplerMatchesCPU|TestSwiGLUAndAdd|TestTakeFramesRoutes|TestTowerDrawnEH|TestTowerRefusesBadSetup|TestUploadAfterEnqueuedWork|TestXPartsNormTails)$'
(cd cmd/proscenium-gpu && T 200 engine-all $X/proscenium-gpu.test -test.v -test.run .) &
(cd engine/cuda && T 240 left-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$LEFT") &
(cd engine/cuda && T 240 left-exact $X/cuda.test -test.v -test.run "$LEFT")
wait
table_benches
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine-all left-fast left-exact
grep -h -B2 -A6 "^--- FAIL\|^    --- FAIL" $O/engine-all.log $O/left-*.log | cut -c1-300 | head -60
grep -h -- "--- SKIP" $O/left-fast.log | head -20
table_report
