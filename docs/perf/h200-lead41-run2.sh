#!/bin/bash
# Lead, session 41, run 2 (one call, ≤ 200 s): the notebook's take, step and tower figures at this code (the kernels
# of session 29; the take engine, voice cache and tiers of sessions 35–41), on whichever card comes: on an H200 the
# Current figures' rows, on an H100 against session 36's H100 figures. bench-take (fast, B = 1 and 4, six takes, two
# rounds; exact, two takes), bench-backbone (1, 2, 4, 8 rows), bench-tower (1, 2, 3, 4, 8 rows from 60 cache rows).
# Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run2 200 .carry-fa
T 50 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
T 15 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 15 tw $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill 60
T 30 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics exact
run_pack
cat $O/machine.txt; cat $O/steps.log
for f in take take-exact; do echo "-- $f"; grep -hE "^take|takes after|first audio  |  frame  |batch [1-8]|backbone step|device memory|held" $O/$f.log | cut -c1-200; done
echo "-- rows:"; grep -hE '^B =' $O/rows.log | cut -c1-160
echo "-- tower:"; grep -h '^takes' $O/tw.log | cut -c1-100
