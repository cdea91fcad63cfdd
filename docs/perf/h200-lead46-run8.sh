#!/bin/bash
# Lead, session 46, run 8 — NOT RUN: two calls (10:37, 10:57 UTC) started no machine (360 s of device time). One call, ≤ 200 s or $BUDGET: on an H200 only, the Current figures' take, step and tower
# benches (table_benches) at this session's final GPU code (bundles at 9178c55; later commits change docs and scripts
# only); on any other card it stops at once (run 5 ran them on an H100).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at 9178c55).
set -u
. docs/perf/run-lib.sh
run_setup run8 ${BUDGET:-200} .carry-fa .carry-fb
table_benches
run_pack
cat $O/machine.txt; cat $O/steps.log
table_report
