#!/bin/bash
# Lead, session 25, run 4 (one call, ≤ 360 s): the whole check on the session's final code (ahead25: the B-row
# down projections' and the DeltaNet update's loads ahead of their PDL wait): session 24 run 5's test list with
# the session's tests and the DeltaNet mixers' (the cluster step, the layer against the CPU, the captured step,
# the B-row step), under exact and under fast (the prefill paths also with the tensor-core attention forced
# on); the engine's tests; the free-running agreement with the CPU (fast, the tensor-core attention forced on:
# demo 100 seeds, odd 20 with the rounding baseline). Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run4 360 .carry-fa
whole_check_tests
run_whole_check
run_pack
run_tally tests-exact tests-fast tests-forced engine
grep -h "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -8
for f in tests-fast tests-exact; do echo "$f last: $(grep -E '^=== RUN' $O/$f.log | tail -1)"; done
grep -h 'worst vector' $O/tests-fast.log | grep -o 'flash-mma[-k16]* call.*' | awk '{print $1, $NF}' | sort -k2 -g | tail -3
agreement_report
