#!/bin/bash
# Lead, session 39, run 3 (one call, ≤ 330 s): the split joint begin again. 1. The joint, split and voice-cache tests
# under fast and exact (run 2's new test found no host tier: mended). 2. bench-take at full geometry, four takes
# begun together in a 10 s voice new to the cache under a 30 GiB cap, with a context of 531 rows (-frames 200) so that
# a pass may take 512 rows (run 2's context of 431 rows held the split pass to the prefix, its script and one
# other's), split and apart, fast (two rounds) and exact (one round: the codes must match to the bit).
# Carried: .carry-fa (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run3 330 .carry-fa
R='^(TestTakeFramesBeginTogether|TestTakeFramesBeginTogetherSplit|TestTakeFramesMatchAlone|TestBackbonePrefillSplit|TestFramesSplitPrefix|TestFramesPrefixCacheInHostMemory|TestRoutedStaging)$'
(cd engine/cuda && T 100 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$R")
(cd engine/cuda && T 100 tests-exact $X/cuda.test -test.v -test.run "$R")
B="$P bench-take -synthetic full -prompt 60 -frames 200 -ref-seconds 10 -prompt-profile -cap 32212254720 -batch 4"
T 60 c30-split $B -rounds 2
T 60 c30-apart $B -rounds 2 -prefix-pass apart
T 70 c30-split-exact $B -numerics exact
T 70 c30-apart-exact $B -numerics exact -prefix-pass apart
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally tests-fast tests-exact
grep -h -A6 -- '--- FAIL' $O/tests-*.log | head -20
grep -hE 'frames the same begun together' $O/tests-*.log | cut -c1-200
for s in c30-split c30-apart c30-split-exact c30-apart-exact; do
	echo "== $s"; grep -E '^(prompt|batch |  uncached|  from the cache)|tier plan' $O/$s.log | cut -c1-330
	grep -i -E 'error|refus|panic' $O/$s.log | head -2
done
