#!/bin/bash
# Lead, session 20, run 5b (one call on the machine run 5 left warm, ≤ 150 s): the exact tests run 5's
# 150 s limit cut off (it stopped inside TestTowerFrames/odd), and TestGemvWeightsAhead.
# Carried: .carry-fa. Logs: $OUT/run5b.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run5b 150 .carry-fa
F='^(TestTowerFrames|TestTowerFrameRows|TestTowerPromptRows|TestGemvRows|TestBackboneXPartsBits|TestGemvWeightsAhead)$'
(cd engine/cuda && T 140 tests-exact $X/cuda.test -test.v -test.run "$F")
run_pack
run_tally tests-exact
