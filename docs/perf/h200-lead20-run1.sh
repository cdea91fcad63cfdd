#!/bin/bash
# Lead, session 20, run 1 (one call, ≤ 60 s): the launch-chain probe with the next weights loaded after a block arrives at a barrier
# (the arrival's release waited for them: run 9, balanced rows or not, ≈ 3 µs a barrier;
# run 8, arrivals over eight counters, fused 1.214 against 1.228 ms).
# Carried: .carry-fa. Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 60 .carry-fa
(cd engine/cuda && T 50 probe $X/cuda.test -test.v -test.run '^TestChainProbe$')
run_pack
run_tally probe
grep -h 'chain probe\|final residual' $O/probe.log
