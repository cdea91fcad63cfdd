#!/bin/bash
# Lead, session 19, run 6 (one call, ≤ 60 s): the launch-chain probe with 16 warps an SM, two rows a warp in flight
# (run 5: 8 warps an SM, four rows a warp, the stagings' loads at once: 2.1–2.3 TB/s). Carried: .carry-fa. Logs: $OUT/run6.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run6 60 .carry-fa
(cd engine/cuda && T 50 probe $X/cuda.test -test.v -test.run '^TestChainProbe$')
run_pack
run_tally probe
grep -h 'chain probe\|final residual' $O/probe.log
