#!/bin/bash
# Lead, session 25, run 3 (one call, ≤ 420 s): run 2's check and A/B with the waited trigger kept only where a
# DeltaNet update reads ahead behind it (the mixers' input projections: Gemv.Waited, GEMV_WAITED; run 2 had every
# GEMV not loading ahead waited, and its two-take step measured 20 µs slower than run 1's without the update's
# loads ahead). The whole check's test list with the new tests, fast and exact, the engine's tests; bench-backbone
# at 1, 2, 4, 8 rows and the take (B = 1, 4) with $PROSCENIUM_GPU_DN_AHEAD=0 and unset, twice each, alternating;
# the tower; exact's take. Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run3 420 .carry-fa
F='^(TestDeltaNetStepAhead|TestMoERowsChainPDL|TestDeltaNetClusterStep|TestDeltaNetLayer|TestDeltaNetMixBits|TestMixerStepGraph|TestDeltaNetStepRows|TestAttentionStepRows|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestBackboneStepRowsMatchTakesAlone|TestFramesTwoAhead|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTowerFrames|TestAttentionFlash|TestAttentionLayer|TestAttentionDecode|TestDeltaNetChunkedLayer|TestMoEGroup|TestGemmGroupedExperts|TestMoERouteNotANumber|TestGemmStreamFP8|TestGemmXParts|TestGemmSplitK|TestMoESwiGLU|TestGemvWeightsAhead|TestGemvRowsWeightsAhead|TestRowsAhead|TestTowerPromptRows|TestTowerFrameRows|TestGemvRows|TestBackboneStepPDLOrder|TestMoEStepChainPDL|TestFusedStep|TestGemvFP8|TestMoEDown|TestMoEDown2MatchesMoEDown|TestMoEDownRowsMatchesOneRow|TestMoEGateUpRoute|TestMoEGateUpIdsMatchesRouted|TestExpertTable|TestBackboneMoE|TestTowerGateUpMMA|TestTowerGateUpMMAUse|TestMoEDown2MMA|TestMoEDown2MMAExpertTable|TestGemvRowsMatchesOneRow|TestTowerFastRows|TestTowerFastRowsVariant|TestCodecGPUChunkedEqualsWhole|TestCodecGPUMatchesReference)$'
(cd engine/cuda && T 230 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 230 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do
	T 12 rows-off-$i env PROSCENIUM_GPU_DN_AHEAD=0 $P $BB
	T 12 rows-on-$i $P $BB
done
for i in 1 2; do
	T 30 take-off-$i env PROSCENIUM_GPU_DN_AHEAD=0 $P $TK
	T 30 take-on-$i $P $TK
done
T 8 tower $P bench-tower -synthetic full -rows 1,2,4,8
T 30 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics exact
run_pack
run_tally tests-fast tests-exact engine
grep -h "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -8
for i in 1 2; do for v in off on; do echo "-- rows $v $i"; grep -hE "^B =" $O/rows-$v-$i.log | cut -c1-100; done; done
for i in 1 2; do for v in off on; do echo "-- take $v $i"; grep -hE "^take  |batch [14]|  loop" $O/take-$v-$i.log | cut -c1-150; grep -h 'batch 4' $O/take-$v-$i.log | grep -o 'codes.*'; done; done
grep -h "^takes" $O/tower.log | cut -c1-110
echo "-- take-exact"; grep -hE "^take  |batch [14]|backbone step" $O/take-exact.log | cut -c1-200
