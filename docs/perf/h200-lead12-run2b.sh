#!/bin/bash
# Lead, session 12, run 2b (one call, ≤ 200 s) on int12c 3ef9bfe (the defaults after run 2: the lean
# draw, split-K summed in z order, FP16 parts for the experts' tiles of 16 and 32 X rows; rows34
# reverted). Where the time goes now, for this session's next helpers: ncu durations (and DRAM bytes)
# of every kernel of a 300-row and a 700-row prefill pass, of the B = 4 step and the B = 1 step; and
# the new defaults' own checks (fast backbone against the CPU, the GEMM tests of the new instances).
# Carried: .carry-fa. Logs: $OUT/run2b.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2b 200 .carry-fa
(cd engine/cuda && T 60 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestGemmF16|TestGemmF16Range|TestGemmSplitK|TestGemmGroupedExperts|TestFramesPrefixCacheMatchesUncached)$') &
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M="--clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv"
T 50 ncu-prefill300 $NCU $M $P bench-backbone -synthetic full -prefill 300 -profile-prefill -numerics fast
wait
T 60 ncu-prefill700 $NCU $M $P bench-backbone -synthetic full -prefill 700 -profile-prefill -numerics fast
T 40 ncu-rows4 $NCU $M --graph-profiling node $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
T 40 ncu-step $NCU $M --graph-profiling node $P bench-backbone -synthetic full -profile-step -numerics fast
run_pack
run_tally tests-fast
for f in ncu-prefill300 ncu-prefill700 ncu-rows4 ncu-step; do echo "== $f"; python3 docs/perf/ncu-sum.py $O/$f.log | head -22; done
