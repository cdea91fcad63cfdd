#!/bin/bash
# Lead, session 39, run 9 (one call, ≤ 110 s), on 9b80abb: a waiting start begins through one helper
# (beginWaiting), after run 7's whole check. The joint prefill's tests (the split begin's among them), the split
# pass's, the host-tier voice cache's and routed staging's, under fast, then exact.
# Run 10 (RUN=10) is the same on eee20a6: the review's one prefixShare for a lone take's split pass and a joint one's.
# Carried: .carry-ft (this commit's cuda.test alone, sm_90 kernels).
set -u
. docs/perf/run-lib.sh
run_setup run${RUN:-9} 110 .carry-ft
R='^(TestTakeFramesBeginTogether|TestTakeFramesBeginTogetherSplit|TestTakeFramesMatchAlone|TestBackbonePrefillSplit|TestFramesSplitPrefix|TestFramesPrefixCacheInHostMemory|TestRoutedStaging)$'
(cd engine/cuda && T 50 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$R")
(cd engine/cuda && T 50 tests-exact $X/cuda.test -test.v -test.run "$R")
run_pack
{ date -u; cat .carry-ft/REV; nvidia-smi --query-gpu=name --format=csv,noheader; } 2>&1
cat $O/steps.log
run_tally tests-fast tests-exact
grep -h -A5 -- '--- FAIL' $O/tests-*.log | head -20
