#!/bin/bash
# Lead, session 19, run 4 (one call, ≤ 60 s): the launch-chain probe with four rows a warp in flight
# (run 3's persistent kernel had one, and read 1.7–1.8 TB/s). Carried: .carry-fa. Logs: $OUT/run4.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run4 60 .carry-fa
(cd engine/cuda && T 50 probe $X/cuda.test -test.v -test.run '^TestChainProbe$')
run_pack
run_tally probe
grep -h 'chain probe\|final residual' $O/probe.log
