#!/bin/bash
# Lead, session 36, run 2 (one call, ≤ 260 s), on main a7dc135 (the bundle) — sessions 35–36's host-side code, whose
# engine paths no GPU has run: the take scheduler without per-frame allocation (bcaab98, after the race's mend
# b412aad), the wrong-folder checks on drama3's first read (05d5642); engine/cuda's code is session 34's (its whole
# check ran on 14258bf, the routing log's tests on a7dc135 in run 1):
# 1. the engine's tests (TestCUDAEngine*: batched takes through the scheduler, cancels, failures alone) while serve
#    --ui loads a full-size checkpoint beside it (the tests measure no time);
# 2. the product through serve --batch 4 (a new voice, four concurrent requests, the studio's readout).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run2 260 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine')
wait $LOADER
run_product 18100
run_pack
cat $O/machine.txt
run_tally engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/engine.log | head -16
grep -h "^--- PASS\|^--- FAIL" $O/engine.log
product_report
