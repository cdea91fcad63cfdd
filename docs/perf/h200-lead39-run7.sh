#!/bin/bash
# Lead, session 39, run 7 (one call, ≤ 420 s), on the session's final code: the whole check (run-lib.sh, now with
# TestTakeFramesBeginTogetherSplit) under fast and exact, the forced tensor-core attention, the engine's tests and the
# agreement with the CPU; then four takes begun together in a new 10 s voice under a 30 GiB cap, split and apart
# (run 3's command, fast, one round each: the same codes digests as run 3's).
# Carried: .carry-fa (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run7 420 .carry-fa
whole_check_tests
run_whole_check
B="$P bench-take -synthetic full -prompt 60 -frames 200 -ref-seconds 10 -prompt-profile -cap 32212254720 -batch 4"
T 60 c30-split $B
T 60 c30-apart $B -prefix-pass apart
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally tests-exact tests-fast tests-forced engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
agreement_report
for s in c30-split c30-apart; do echo "== $s"; grep -E '^(batch |  uncached)' $O/$s.log | cut -c1-330; done
