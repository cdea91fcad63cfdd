#!/bin/bash
# Lead, session 28, run 2 (one call, ≤ 400 s), on int28 once run 1 has said which of its four changes to keep (set
# their defaults first): the whole check of session 25 run 4 with the session's tests, under exact and fast (the
# prefill paths also with the tensor-core attention forced on); the engine's tests; the free-running agreement with
# the CPU (fast, the tensor-core attention forced on: demo 100 seeds, odd 20 with the rounding baseline).
# Carried: .carry-fa (h200-lead6-build.sh on int28).
set -u
. docs/perf/run-lib.sh
run_setup run2 400 .carry-fa
whole_check_tests TestTowerDrawnEH TestModelBytesMatchesTheLoad TestSamplerLeanTable TestSamplerLeanEmbed TestTowerFrameRows
run_whole_check
run_pack
run_tally tests-exact tests-fast tests-forced engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -16
grep -h "code-0 layer\|residual layer\|worst relative" $O/tests-fast.log | sort | uniq -c | sort -rn | head -12
agreement_report
