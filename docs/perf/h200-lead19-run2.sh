#!/bin/bash
# Lead, session 19, run 2 (one call, ≤ 150 s): the launch-chain probe (TestChainProbe: 40 probe layers of
# the step's dense projections as launches, as GEMVs alone, as one persistent kernel with phases and with
# the small operations fused into the staging); the worker's engine with takes interleaved
# (Frames.NewTake on Backbone.Sibling) and batched, both policies. Carried: .carry-fa. Logs: $OUT/run2.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2 150 .carry-fa
(cd engine/cuda && T 60 probe $X/cuda.test -test.v -test.run '^TestChainProbe$')
(cd cmd/proscenium-gpu && T 60 engine-il env PROSCENIUM_GPU_BATCHED=0 $X/proscenium-gpu.test -test.v -test.run '^(TestCUDAEngineTakes|TestCUDAEngineBatchedTakes)$') &
(cd cmd/proscenium-gpu && T 60 engine-fast env PROSCENIUM_TEST_NUMERICS=fast $X/proscenium-gpu.test -test.v -test.run '^(TestCUDAEngineTakes|TestCUDAEngineBatchedTakes)$') &
wait
run_pack
run_tally probe engine-il engine-fast
grep -h 'chain probe\|final residual' $O/probe.log
