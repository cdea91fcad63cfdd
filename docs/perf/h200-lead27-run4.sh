#!/bin/bash
# Lead, session 27, run 4 (one call, ≤ 150 s): the tier mend after run 3 (the tower's tables give way also when the
# first plan does not fit at all): the engine's tests (TestCUDAEngineTiers among them, both policies) and the
# model-bytes test; a take under a 22 GiB cap and four at once under 30 GiB (the tables left out: each plan's peak
# must stay within it). Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run4 150 .carry-fa
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine')
(cd engine/cuda && T 40 bytes $X/cuda.test -test.v -test.run '^(TestModelBytesMatchesTheLoad|TestTowerDrawnEH)$')
T 30 capped22 $P bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -cap 23622320128 -numerics fast
T 40 capped30 $P bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -cap 32212254720 -batch 1,4 -numerics fast
run_pack
run_tally engine bytes
grep -h -A3 -- "--- FAIL" $O/engine.log $O/bytes.log | head -12; grep -h "without the tower's tables" $O/engine.log | head -2
for f in capped22 capped30; do echo "-- $f"; grep -hiE "tier|^take  |first audio  |batch [14]|experts  |peak" $O/$f.log | cut -c1-220 | head -8; done
