#!/bin/bash
# Lead, session 19, run 7 (one call, ≤ 60 s): the launch-chain probe with a variant without grid barriers (the streaming and stagings alone)
# (run 6: 16 warps an SM, two rows a warp, 2.1–2.4 TB/s). Carried: .carry-fa. Logs: $OUT/run7.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run7 60 .carry-fa
(cd engine/cuda && T 50 probe $X/cuda.test -test.v -test.run '^TestChainProbe$')
run_pack
run_tally probe
grep -h 'chain probe\|final residual' $O/probe.log
