#!/bin/bash
# Lead, session 34, run 3 (one call, ≤ 480 s), on main 14258bf (the code of sessions 31–34 — the take comparisons
# untagged, the routing log of steps and prefill passes, its hooks in the step's MoE paths — whose whole check never
# ran: session 30's was the last, on 15c7f6c):
# 1. the whole check under fast and exact (session 30's list with the routing log's tests in front), the prefill paths
#    with the tensor-core attention forced on, the engine's tests, the agreement with the CPU — while serve --ui loads a
#    full-size checkpoint beside it (the tests measure no time);
# 2. the figures the Current table keeps from before session 30 that these sessions' code touches: the prefill of 60,
#    300, 700 rows (now inside inPass), a cloned voice (10 s, cached and not), a 30 GiB cap's four takes;
# 3. the product through serve.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run3 480 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
whole_check_tests TestCopyRows TestTakeFramesRoutes TestTowerDrawnEH TestModelBytesMatchesTheLoad TestSamplerLeanTable TestSamplerLeanEmbed TestTowerAttnChoose
run_whole_check
wait $LOADER
T 30 prefill $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 40 voice $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 60 capped30 $P bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -cap 32212254720 -batch 1,4 -numerics fast
run_product 18100
run_pack
run_tally tests-exact tests-fast tests-forced engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
agreement_report
echo "-- prefill"; grep -hiE "prefill|rows" $O/prefill.log | cut -c1-200 | head -8
echo "-- voice"; grep -hiE "first audio|voice|prefill|cache" $O/voice.log | cut -c1-200 | head -10
echo "-- capped30"; grep -hiE "tier|tables|^take  |first audio  |batch [14]|peak|held" $O/capped30.log | cut -c1-220 | head -12
product_report
