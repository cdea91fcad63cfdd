#!/bin/bash
# Lead, session 20, run 2 (one call, ≤ 60 s): the launch-chain probe with the small operations' spare
# blocks asking L2 for the next GEMV's first weights (chain_prefetch), at 1/8 … all of them, against
# the same chain without (run 1: launches 1.060 ms, GEMVs alone 0.843: the small operations cost
# 1.8 µs each; persistent, fused, 1.145 with the two-half barrier).
# Carried: .carry-fa. Logs: $OUT/run2.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2 60 .carry-fa
(cd engine/cuda && T 50 probe $X/cuda.test -test.v -test.run '^TestChainProbe$')
run_pack
run_tally probe
grep -h 'chain probe\|final residual\|Error\|error' $O/probe.log
