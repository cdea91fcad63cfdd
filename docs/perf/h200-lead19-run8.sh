#!/bin/bash
# Lead, session 19, run 8 (one call, ≤ 60 s): the launch-chain probe with a cheaper grid barrier (arrivals
# spread over eight counters by red.release, which does not wait for its result), run 7: without its
# barriers the persistent kernel streams as the launched GEMVs (0.844 ms), with them 1.228 ms (≈ 3.2 µs a
# barrier). Carried: .carry-fa. Logs: $OUT/run8.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run8 60 .carry-fa
(cd engine/cuda && T 50 probe $X/cuda.test -test.v -test.run '^TestChainProbe$')
run_pack
run_tally probe
grep -h 'chain probe\|final residual' $O/probe.log
