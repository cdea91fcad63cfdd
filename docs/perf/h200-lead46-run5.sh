#!/bin/bash
# Lead, session 46, run 5 — RUN at 09:37 UTC on an H100 (bundles at ec71929; results in PERF "Session 46"). One call, ≤ 200 s or $BUDGET: the Current figures' take, step and tower benches (table_benches)
# on whatever card comes (ANY_CARD=yes): no fast bench has run on any GPU since session 42's H200 run, and sessions 43–46
# changed the exact GEMMs' tile loader and host Go around the step. On an H100 they compare with session 36's H100
# figures (a7dc135: take fast 0.0723, step B = 1/2/4/8 2.335/2.883/3.781/5.788 ms, tower B = 1/2/3/4/8
# 0.798/0.873/0.977/0.970/1.249 ms); on an H200, with the Current figures' table.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run5 ${BUDGET:-200} .carry-fa .carry-fb
ANY_CARD=yes table_benches
run_pack
cat $O/machine.txt; cat $O/steps.log
table_report
