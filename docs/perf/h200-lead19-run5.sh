#!/bin/bash
# Lead, session 19, run 5 (one call, ≤ 60 s): the launch-chain probe with each staging's loads issued at once
# (run 4: four rows a warp in flight changed nothing, 1.6–1.7 TB/s; the stagings were a chain of L2 round trips). Carried: .carry-fa. Logs: $OUT/run5.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run5 60 .carry-fa
(cd engine/cuda && T 50 probe $X/cuda.test -test.v -test.run '^TestChainProbe$')
run_pack
run_tally probe
grep -h 'chain probe\|final residual' $O/probe.log
