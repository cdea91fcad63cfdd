#!/bin/bash
# Lead, session 30, run 1 (one call, ≤ 560 s), on main 15c7f6c (session 29's final code: keys29's attention rule by
# width and the review's refactors, neither run on the device as one build):
# 1. the whole check under fast and exact (session 28's list with sessions 28–29's tests in front), the prefill paths
#    with the tensor-core attention forced on, the engine's tests, the agreement with the CPU — while serve --ui loads
#    a full-size checkpoint beside it (the tests measure no time);
# 2. the final figures with the rule as built: the take (B = 1, 4; six takes, two rounds), three takes at once and
#    two and eight, exact's take, the step and the tower at 1, 2, 3, 4, 8 rows from 60 and 300 cache rows, a 30 GiB
#    cap's four takes (the plan must leave the tower's tables out and say so);
# 3. the product through serve.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run1 560 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
whole_check_tests TestTowerDrawnEH TestModelBytesMatchesTheLoad TestSamplerLeanTable TestSamplerLeanEmbed TestTowerFrameRows
run_whole_check
wait $LOADER
T 45 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
T 40 take-238 $P bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 2,3,8 -seed-base 3 -numerics fast
T 25 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics exact
for i in 1 2; do
	T 10 rows-$i $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
	for p in 60 300; do T 8 tower-$p-$i $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill $p; done
done
T 60 capped30 $P bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -cap 32212254720 -batch 1,4 -numerics fast
run_product 18100
run_pack
run_tally tests-exact tests-fast tests-forced engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -16
agreement_report
for f in take take-238 take-exact; do echo "-- $f"; grep -hE "^take|takes after|first audio  |  frame  |batch [1-8]|backbone step|device memory|held" $O/$f.log | cut -c1-200; done
for i in 1 2; do echo "-- rows $i: $(grep -hE '^B =' $O/rows-$i.log | cut -c1-60 | tr '\n' ' ')"; done
for i in 1 2; do for p in 60 300; do echo "-- tower $p $i: $(grep -h '^takes' $O/tower-$p-$i.log | sed 's/, gemvx default//;s/ of weights//' | cut -c1-80 | tr '\n' ';')"; done; done
echo "-- capped30"; grep -hiE "tier|tables|^take  |first audio  |batch [14]|peak|held" $O/capped30.log | cut -c1-220 | head -12
product_report
