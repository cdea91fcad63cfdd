#!/bin/bash
# Lead, session 13, run 7 (one call, ≤ 90 s) on main after run 6b's cleanups: the flash kernels' shared
# split rule (TestAttentionFlash, both kernels, fast; the backbone's prefill through them), the chunked
# rule's kernel tests on their shared shapes (TestDeltaNetChunkIntraTiled, TestDeltaNetChunkStateTiled),
# and the prefill's figures once more. Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run7.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run7 90 .carry-fa
(cd engine/cuda && T 70 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^(TestAttentionFlash|TestDeltaNetChunkIntraTiled|TestDeltaNetChunkStateTiled|TestBackbonePrefillPassesMatchCPU|TestFlashSplits|TestFlash2Splits)$')
T 12 prefill $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
run_pack
run_tally tests-fast
grep -E '^(60|300|700) ' $O/prefill.log
