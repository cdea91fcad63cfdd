#!/bin/bash
# Lead, session 19, run 3 (one call, ≤ 150 s): the launch-chain probe again, its barrier counter's base now
# from the host (run 2: the fused variant skipped its barriers and the timing loop hung); takes
# interleaved at the full geometry (Frames.NewTake on Backbone.Sibling: bench-take -batched=false).
# Carried: .carry-fa. Logs: $OUT/run3.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run3 150 .carry-fa
(cd engine/cuda && T 60 probe $X/cuda.test -test.v -test.run '^TestChainProbe$')
T 70 interleaved $P bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -batch 2 -batched=false
run_pack
run_tally probe
grep -h 'chain probe\|final residual' $O/probe.log
tail -n 12 $O/interleaved.log
