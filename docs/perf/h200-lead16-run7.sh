#!/bin/bash
# Lead, session 16, run 7 (one call, ≤ 90 s): the prefill's inputs copied on the stream inside its
# pass (no uploads with synchronisations): the backbone's prefill paths under both policies (one
# pass, several passes, reference rows, the voice cache), the engine's tests, the prefill three
# times. Carried: .carry-fa. Logs: $OUT/run7.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run7 90 .carry-fa
F='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether)$'
(cd engine/cuda && T 60 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 60 tests-exact $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 40 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
for i in 1 2 3; do T 12 prefill$i $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
T 15 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
run_pack
run_tally tests-fast tests-exact engine
for i in 1 2 3; do echo "-- prefill$i"; grep -E '^(60|300|700) ' $O/prefill$i.log | cut -c1-40; done
grep -hE "uncached|from the cache" $O/ref10.log | cut -c1-160
