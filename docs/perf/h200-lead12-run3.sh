#!/bin/bash
# Lead, session 12, run 3 (one call, ≤ 420 s) on int12d = int12c (run 2c's checked defaults) + this
# session's last helpers, each new path off by default: dnstate34 (the chunked DeltaNet state kernel,
# PROSCENIUM_GPU_DN_STATE=tiled), group34 (moe_group ranked by every warp, by default; PROSCENIUM_GPU_MOE_GROUP=old for
# the old one), norm34 (the step's add + norm and combine + norm as sm_90 clusters,
# PROSCENIUM_GPU_NORM_CLUSTER=1). Each helper's script (its checks, its path timed against the old in
# one run); then every new path on together (NEW below): the fast tests of the paths they touch and
# the engine's tests, then the take (B = 1, 4), the step (B = 1…8), the prefill and a 10 s voice.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run3.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run3 420 .carry-fa
for h in dnstate34 group34 norm34; do [ -f docs/perf/h200-$h.sh ] && T 80 $h bash docs/perf/h200-$h.sh $X $O/$h; done
NEW="${NEW:-PROSCENIUM_GPU_DN_STATE=tiled PROSCENIUM_GPU_NORM_CLUSTER=1}"
F='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestMoEStepChainPDL|TestFramesTwoAhead|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesPrefixCacheMatchesUncached|TestMoEGroup|TestGemmGroupedExperts|TestDeltaNetChunkedLayer)$'
(cd engine/cuda && T 120 tests-new env $NEW PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine-new env $NEW $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
T 40 take-new env $NEW $P bench-take -synthetic full -prompt 60 -frames 300 -takes 4 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
T 10 rows-new env $NEW $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 10 prefill-new env $NEW $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 20 ref10-new env $NEW $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
run_pack
run_tally tests-new engine-new
for h in dnstate34 group34 norm34; do echo "===== $h"; tail -n 28 $O/$h.log | cut -c1-230; done
echo "===== every new path on ($NEW)"
grep -hE "^take |  frame|batch [14] |first audio  " $O/take-new.log | cut -c1-200
grep -hE "^B =" $O/rows-new.log | cut -c1-110; grep -E '^(60|300|700) ' $O/prefill-new.log
grep -hE "uncached|from the cache" $O/ref10-new.log | cut -c1-160
