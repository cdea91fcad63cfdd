#!/bin/bash
# Lead, session 13, run 8 (one call, ≤ 60 s) on main after the review removed dnc13's prep_rows and
# norm_warp (the default path unchanged: deltanet_chunk_prep and _norm, the tiled intra from 128 rows):
# the chunked DeltaNet's tests under fast and exact, and the fast prefill through it.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run8.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run8 60 .carry-fa
(cd engine/cuda && T 50 fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^(TestDeltaNetChunkIntraTiled|TestDeltaNetChunkedLayer|TestDeltaNetChunkRule|TestBackboneMatchesCPU)$') &
(cd engine/cuda && T 50 exact $X/cuda.test -test.v -test.run '^(TestDeltaNetChunkRule|TestDeltaNetChunkedLayer)$') &
wait
T 8 prefill $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
run_pack
run_tally fast exact
grep -E '^(60|300|700) ' $O/prefill.log
