#!/bin/bash
# Lead, session 39, run 2 (one call, ≤ 330 s): takes begun together under a host tier run a voice prefix's last pass
# and the scripts after it as one split joint pass (frame_takes_split_cuda.go). 1. The joint, split and voice-cache
# tests under fast and exact, the new TestTakeFramesBeginTogetherSplit among them. 2. bench-take at full geometry,
# each -batch round in a 10 s voice new to the cache: four takes at a 30 GiB cap and two at 22 GiB, split (the
# product's way) and apart (the code before the change: the prefix's pass, then the scripts'), in one process each,
# on one machine; and uncapped (no split: the joint pass's code path refactored, figures to match session 38's).
# Carried: .carry-fa (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run2 330 .carry-fa
R='^(TestTakeFramesBeginTogether|TestTakeFramesBeginTogetherSplit|TestTakeFramesMatchAlone|TestBackbonePrefillSplit|TestFramesSplitPrefix|TestFramesPrefixCacheInHostMemory|TestRoutedStaging)$'
(cd engine/cuda && T 100 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$R")
(cd engine/cuda && T 100 tests-exact $X/cuda.test -test.v -test.run "$R")
B="$P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile"
C30=32212254720; C22=23622320128
T 60 c30-split $B -cap $C30 -batch 4 -rounds 2
T 60 c30-apart $B -cap $C30 -batch 4 -rounds 2 -prefix-pass apart
T 60 c22-split $B -cap $C22 -batch 2 -rounds 2
T 60 c22-apart $B -cap $C22 -batch 2 -rounds 2 -prefix-pass apart
T 45 uncapped $B -batch 4 -rounds 2
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally tests-fast tests-exact
grep -h -A6 -- '--- FAIL' $O/tests-*.log | head -20
grep -hE 'frames the same begun together|host layers under' $O/tests-*.log | cut -c1-200
for s in c30-split c30-apart c22-split c22-apart uncapped; do
	echo "== $s"; grep -E '^(batch |  uncached|  from the cache|experts )' $O/$s.log | cut -c1-330
	grep -i -E 'error|refus|panic' $O/$s.log | head -2
done
