#!/bin/bash
# Lead, session 36, run 2 (one call, ≤ 420 s), on main a7dc135 (the bundle) — sessions 35–36's host-side code, whose
# engine paths no GPU has run: the take scheduler without per-frame allocation (bcaab98, after the race's mend
# b412aad), the wrong-folder checks on drama3's first read (05d5642), the speech API's routes (091b1fd is after the
# bundle: host-only, tested in CI):
# 1. the whole check under fast and exact (session 34 run 3's list), the prefill paths with the tensor-core attention
#    forced on, the engine's tests (TestCUDAEngine*: batched takes through the scheduler), the agreement with the CPU —
#    while serve --ui loads a full-size checkpoint beside it (the tests measure no time);
# 2. the product through serve --batch 4 (a new voice, four concurrent requests, the studio's readout).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run2 420 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
whole_check_tests TestCopyRows TestTakeFramesRoutes TestTowerDrawnEH TestModelBytesMatchesTheLoad TestSamplerLeanTable TestSamplerLeanEmbed TestTowerAttnChoose
run_whole_check
wait $LOADER
run_product 18100
run_pack
cat $O/machine.txt
run_tally tests-exact tests-fast tests-forced engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
agreement_report
product_report
