#!/bin/bash
# The B-row backbone step (issue 27, rowstep27) on merged binaries, for the lead's final run
# (≈ 45 s on an H200): its tests under both policies, then bench-backbone -rows under fast (the
# default choice: long projections on the tensor cores from 4 rows), fast with every several-row
# projection on the SIMT instances (PROSCENIUM_GPU_GEMVX=simt, the A/B), and exact.
# Usage, from the root of a checkout with the golden checkpoints:
#   BIN=DIR bash docs/perf/h200-rowstep27-final.sh   # DIR holds cuda.test (go test -tags cuda -c
#                                                     # ./engine/cuda) and proscenium-gpu; default .carry
# Prints the figures docs/PERF.md "Several takes in one step" quotes; logs in $OUT/rowstep27-final.tgz
# (or /tmp/rowstep27-final.tgz without $OUT).
set -u
BIN=${BIN:-.carry}; O=/tmp/rowstep27-final; rm -rf $O; mkdir -p $O
export PROSCENIUM_GPU_CKPTS=$PWD/engine/cpu/testdata/backbone/ckpt
T() { local s=$1; shift; local n=$1; shift; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
T 30 tests-exact $BIN/cuda.test -test.v -test.run 'TestGemvRowsMatchesOneRow|TestMoEDownRowsMatchesOneRow|TestDeltaNetStepRows|TestAttentionStepRows|TestBackboneStepRowsMatchTakesAlone'
PROSCENIUM_TEST_NUMERICS=fast T 20 tests-fast $BIN/cuda.test -test.v -test.run 'TestBackboneStepRowsMatchTakesAlone'
# every several-row projection on the tensor cores inside whole steps (the test checkpoints'
# projections are too short for the default rule to take them): within fast's 1e-4 of alone
PROSCENIUM_GPU_GEMVX=mma PROSCENIUM_TEST_NUMERICS=fast T 20 tests-fast-mma $BIN/cuda.test -test.v -test.run 'TestBackboneStepRowsMatchTakesAlone'
T 20 bench-fast $BIN/proscenium-gpu bench-backbone -synthetic full -numerics fast -steps 50 -rows 1,2,4,8
PROSCENIUM_GPU_GEMVX=simt T 20 bench-fast-simt $BIN/proscenium-gpu bench-backbone -synthetic full -numerics fast -steps 50 -rows 4,8
T 20 bench-exact $BIN/proscenium-gpu bench-backbone -synthetic full -numerics exact -steps 50 -rows 1,2,4,8
(cd /tmp && tar czf ${OUT:-/tmp}/rowstep27-final.tgz rowstep27-final)
echo "== steps"; tr '\n' ' ' < $O/steps.log; echo
echo "== tests"; grep -hE "^--- (PASS|FAIL)" $O/tests-*.log | sort | uniq -c
echo "== takes stepped together against alone (values differing: count of takes), worst row under mma"; grep -hoE "(prompt|steps) \(slot [0-9]\): [0-9]+ of" $O/tests-*.log | awk '{print $1, $4}' | sort | uniq -c
grep -hoE "worst row [0-9.e+-]+ relative" $O/tests-fast-mma.log | sort -k3 -g | tail -1
echo "== B-row step: fast (default), fast with SIMT projections only, exact"
cat $O/bench-fast.log $O/bench-fast-simt.log $O/bench-exact.log
