#!/bin/bash
# Lead, session 38, run 5 (one call, ≤ 330 s), on main 92662ce (run 3's code and the takes begun together in one new
# voice sharing its prefill): the whole check under fast and exact, the prefill paths with the tensor-core attention
# forced on, the engine's tests and the agreement with the CPU, as in run 3.
# Carried: .carry-fa (h200-lead6-build.sh on 92662ce).
set -u
. docs/perf/run-lib.sh
run_setup run5 330 .carry-fa
whole_check_tests
run_whole_check
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally tests-exact tests-fast tests-forced engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
agreement_report
