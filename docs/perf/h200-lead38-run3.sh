#!/bin/bash
# Lead, session 38, run 3 (one call, ≤ 480 s), on main c2357b2 (the split pass, routed staging and their tests, with
# the refactors they brought: the backbone's layer loop as layerForward, the stage's tracking per expert): the whole
# check under fast and exact (run-lib.sh's list, which now has the split, routed-staging and host-tier voice-cache
# tests), the prefill paths with the tensor-core attention forced on, the engine's tests and the agreement with the
# CPU; then four takes begun together under a 30 GiB cap (a joint prefill: its passes stage routed experts now),
# the old way (-host-stage layer) and the new, on one machine.
# Carried: .carry-fa (h200-lead6-build.sh on c2357b2).
set -u
. docs/perf/run-lib.sh
run_setup run3 480 .carry-fa
whole_check_tests
run_whole_check
C30=32212254720
T 60 capped30-old $P bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -cap $C30 -batch 1,4 -numerics fast -prompt-profile -host-stage layer
T 60 capped30-new $P bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -cap $C30 -batch 1,4 -numerics fast -prompt-profile
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally tests-exact tests-fast tests-forced engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
agreement_report
for s in capped30-old capped30-new; do echo "-- $s"; grep -hiE "tier|^take  |first audio|batch [14]|begin|peak" $O/$s.log | cut -c1-220 | head -14; done
