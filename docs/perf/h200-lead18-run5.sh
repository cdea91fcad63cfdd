#!/bin/bash
# Lead, session 18, run 5 (one call, ≤ 120 s): TestBackbonePrefillPassesMatchCPU drawing another input
# when the CPU reference pins too few rows, at session 17's failing seed (8079117535975074873: 532 of 785
# rows ill-conditioned on tiny-fp8-fused) and at a random one, under fast and exact. Carried: .carry-fa.
# Logs: $OUT/run5.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run5 120 .carry-fa
SEED=8079117535975074873
(cd engine/cuda && T 90 seed-fast env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_TEST_SEED=$SEED $X/cuda.test -test.v -test.run '^TestBackbonePrefillPassesMatchCPU$') &
(cd engine/cuda && T 90 seed-exact env PROSCENIUM_TEST_SEED=$SEED $X/cuda.test -test.v -test.run '^TestBackbonePrefillPassesMatchCPU$') &
(cd engine/cuda && T 90 random-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^TestBackbonePrefillPassesMatchCPU$') &
wait
run_pack
run_tally seed-fast seed-exact random-fast
for f in seed-fast seed-exact random-fast; do echo "-- $f"; grep -hE 'seed [0-9]|drawing another|ill-conditioned \(bound' $O/$f.log | cut -c1-230; done
