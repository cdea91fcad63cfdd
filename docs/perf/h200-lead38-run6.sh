#!/bin/bash
# Lead, session 38, run 6 (one call, ≤ 110 s), on the review's commit: the joint pass now reads its takes' rows
# through rowsView (spanView removed) and a snapshot region names its DeltaNet layer in one field. The tests of the
# joint prefill, the split pass, the host-tier voice cache and routed staging under fast, then exact.
# Carried: .carry-ft (this commit's cuda.test alone, sm_90 kernels).
set -u
. docs/perf/run-lib.sh
run_setup run6 110 .carry-ft
R='^(TestTakeFramesBeginTogether|TestTakeFramesMatchAlone|TestBackbonePrefillSplit|TestFramesSplitPrefix|TestFramesPrefixCacheInHostMemory|TestRoutedStaging)$'
(cd engine/cuda && T 50 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$R")
(cd engine/cuda && T 50 tests-exact $X/cuda.test -test.v -test.run "$R")
run_pack
{ date -u; cat .carry-ft/REV; nvidia-smi --query-gpu=name --format=csv,noheader; } 2>&1
cat $O/steps.log
run_tally tests-fast tests-exact
grep -h -A5 -- '--- FAIL' $O/tests-*.log | head -20
