#!/bin/bash
# Lead, session 38, run 2 (one call, ≤ 330 s), on main 14b925f: routed staging wherever a pass would copy whole
# layers (the pays rule only below), and the host-tier tests with three host layers. 1. The split, routed-staging and
# prefix-cache tests under fast and exact. 2. bench-take of a 10 s cloned voice at 22 GiB (new), with -hot-experts
# (the uncached take's prefix pass now stages the 8 experts a layer its rows route to), a 30 s voice at 22 GiB, and
# uncapped (the device tier, which nothing here changes; session 37 run 4 on an H100: 74.64 / 31.88 ms).
# Carried: .carry-fa (h200-lead6-build.sh on 14b925f).
set -u
. docs/perf/run-lib.sh
run_setup run2 330 .carry-fa
NEW='TestBackbonePrefillSplit|TestFramesSplitPrefix|TestRoutedStaging|TestFramesPrefixCacheInHostMemory|TestFramesPrefixCacheMatchesUncached'
(cd engine/cuda && T 120 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "^($NEW)\$")
(cd engine/cuda && T 120 tests-exact $X/cuda.test -test.v -test.run "^($NEW)\$")
B="$P bench-take -synthetic full -prompt 60 -frames 100 -prompt-profile"
C22=23622320128
T 50 v10-22g $B -ref-seconds 10 -cap $C22
T 50 hot-22g $B -ref-seconds 10 -cap $C22 -hot-experts
T 50 v30-22g $B -ref-seconds 30 -cap $C22
T 40 v10 $B -ref-seconds 10
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally tests-fast tests-exact
grep -hE 'host layers under|rows: routed staging carried|split pass from' $O/tests-fast.log | cut -c1-260
for s in v10-22g hot-22g v30-22g v10; do
	echo "== $s"; grep -E '^(prompt|reference|  uncached|  from the cache|first audio)|feedback rows' $O/$s.log | cut -c1-230
	grep -i -E 'error|refus|panic' $O/$s.log | head -2
done
