#!/bin/bash
# Lead, session 19, run 1 (one call, ≤ 150 s): several takes' frames as groups on streams of their own
# against one batch (bench-groups: the B-row step and tower of each group replayed side by side, in turn,
# and the steps alone side by side), 2, 4 and 8 takes, fast; then the B-row step and tower for reference.
# Carried: .carry-fa. Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 150 .carry-fa
T 60 groups4 $P bench-groups -takes 4 -groups 1,2,4 -frames 50
T 60 groups8 $P bench-groups -takes 8 -groups 1,2,4 -frames 50
T 40 groups2 $P bench-groups -takes 2 -groups 1,2 -frames 50
T 30 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 20 tower $P bench-tower -synthetic full -rows 1,2,4,8
run_pack
cat $O/steps.log
for f in groups4 groups8 groups2 rows tower; do echo "-- $f"; tail -n 8 $O/$f.log; done
