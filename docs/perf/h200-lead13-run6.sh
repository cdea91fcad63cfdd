#!/bin/bash
# Lead, session 13, run 6 (one call, ≤ 60 s): the engine's tests on the final code after run 5's one
# failure (TestCUDAEngineTiers derived its caps from the uncapped load, which the auto prefill plan
# now gives 2048-row passes; the test now finds the whole load of the shortest passes first).
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run6.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run6 60 .carry-fa
(cd cmd/proscenium-gpu && T 55 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine')
run_pack
run_tally engine
grep -hE "^(=== RUN|--- |    --- )|tier_cuda_test|prefill passes" $O/engine.log | cut -c1-200 | head -60
