#!/bin/bash
# Lead, session 42, run 2 (one call, ≤ 260 s): the session's final code on whichever card comes. The engine's tests
# (TestCUDAEngine*: the voice cache's size, priming, takes together, tiers) and the take, step and tower benches
# (table_benches on any card: on an H200 the Current figures' rows, on an H100 against session 41's run 2).
# Carried: .carry-fa (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run2 260 .carry-fa
(cd cmd/proscenium-gpu && T 120 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine')
ANY_CARD=yes table_benches
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine
grep -h -A6 -- '--- FAIL' $O/engine.log | head -20
table_report
