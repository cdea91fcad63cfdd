#!/bin/bash
# Lead, session 16, run 5 (one call, ≤ 150 s): the defaults after run 4 (early16; dnprep16 and gluprep16
# from 512 rows): the dense tile rule "main" against "31" in one process (the 300-row shared down
# on the 64 × 32 x-parts tile instead of 128 × 32 s), the prefill three times, the fast prefill
# paths with dnprep16 and gluprep16 forced on. Carried: .carry-fa. Logs: $OUT/run5.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run5 150 .carry-fa
F='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestBackboneXPartsBits)$'
(cd engine/cuda && T 90 tests-forced env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_DN_PREP=tiled PROSCENIUM_GPU_GEMM_STREAM_SWIGLU=on $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 90 tests-main env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_TILES=main $X/cuda.test -test.v -test.run '^(TestBackboneMatchesCPU|TestBackboneXPartsBits)$') &
wait
AB="$P bench-backbone -synthetic full -numerics fast"
T 40 ab-tiles $AB -prefills 60,300,700 -ab PROSCENIUM_GPU_GEMM_TILES=31,main
for i in 1 2 3; do T 25 prefill$i $AB -prefills 60,300,700; done
run_pack
run_tally tests-forced tests-main
for f in ab-tiles; do echo "-- $f"; grep -E '^(rows|60|300|700) ' $O/$f.log; done
for i in 1 2 3; do echo "-- prefill$i"; grep -E '^(60|300|700) ' $O/prefill$i.log | cut -c1-40; done
