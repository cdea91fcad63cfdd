#!/bin/bash
# Lead, session 47, run 1 (session 46's run 8, which never started): one call, ≤ 200 s or $BUDGET. On an H200 only,
# the Current figures' take, step and tower benches (table_benches) at session 46's final GPU code (bundles at
# 9178c55; after it only engine/take's prime path, which the benches do not run, tests and docs changed). On any
# other card it stops at once.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at 9178c55).
set -u
. docs/perf/run-lib.sh
run_setup lead47-run1 ${BUDGET:-200} .carry-fa .carry-fb
table_benches
run_pack
cat $O/machine.txt; cat $O/steps.log
table_report
