#!/bin/bash
# Lead, session 18, run 6 (one call, ≤ 150 s): the review's mend (a pass's embedding rows sliced only
# where the prompt has them; checkRows counting widened rows with widenedRows). The backbone and prompt
# tests that feed embedding rows (reference frames) and token-only prompts under fast and exact; the
# prefill and a 10 s voice. Carried: .carry-fa. Logs: $OUT/run6.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run6 150 .carry-fa
F='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesBeginPromptMatchesTheCPU|TestFramesPrefixCacheMatchesUncached|TestTakeFramesBeginTogether|TestModelBytesMatchesTheLoad)$'
(cd engine/cuda && T 110 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 110 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
T 12 prefill $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
run_pack
run_tally tests-fast tests-exact
grep -E '^(60|300|700) ' $O/prefill.log | cut -c1-40
grep -hE "uncached|from the cache" $O/ref10.log | cut -c1-160
