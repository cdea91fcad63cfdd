#!/bin/bash
# Lead, session 19, run 9 (one call, ≤ 60 s): the launch-chain probe at the model's 12352 in-projection rows
# and at 12672 (a multiple of the persistent kernel's 2112 warps): run 8's cheaper barrier changed little
# (fused 1.214 against 1.228 ms), so is a barrier's ≈ 3 µs the warps with a row more than the others?
# Carried: .carry-fa. Logs: $OUT/run9.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run9 60 .carry-fa
(cd engine/cuda && T 50 probe $X/cuda.test -test.v -test.run '^TestChainProbe$')
run_pack
run_tally probe
grep -h 'chain probe\|final residual' $O/probe.log
