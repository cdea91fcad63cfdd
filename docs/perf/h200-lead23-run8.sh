#!/bin/bash
# Lead, session 23, run 8 (one call, ≤ 90 s): TestTowerFastRows as mended (run 7's hung on an upload inside a
# device call), fast and exact processes. Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run8.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run8 90 .carry-fa
(cd engine/cuda && T 60 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^(TestTowerFastRows|TestGemvRowsMatchesOneRow)$') &
(cd engine/cuda && T 60 tests-exact $X/cuda.test -test.v -test.run '^TestTowerFastRows$')
wait
run_pack
run_tally tests-exact tests-fast
