#!/bin/bash
# step27b (issue 27: the decode step's kernels) for the lead's final run (≈ 40 s on an H200): the
# B-row/one-take step benches under fast (B = 1, 2, 4, 8) and exact (B = 1, 4), then the tests of
# the changed kernels and whole steps: exact (the CPU's bits on the golden checkpoints, the routed
# gate·up against the two launches it replaces, the fused step's launch count) and fast.
# Usage, from the root of a checkout with the golden checkpoints:
#   bash docs/perf/h200-step27b.sh BIN     # BIN holds cuda.test (go test -tags cuda -c ./engine/cuda)
#                                          # and proscenium-gpu (go build -tags cuda ./cmd/proscenium-gpu)
# Prints the step figures and test counts; logs in $OUT/step27b-final.tgz (or /tmp without $OUT).
set -u
BIN=${1:?usage: h200-step27b.sh BINDIR}; O=/tmp/step27b-final; rm -rf $O; mkdir -p $O
export PROSCENIUM_GPU_CKPTS=$PWD/engine/cpu/testdata/backbone/ckpt
END=$(( $(date +%s) + ${BUDGET_S:-43} ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 3 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t0=$(date +%s); timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s) - t0 ))s" >> $O/steps.log; }
B="bench-backbone -synthetic full -steps 50"
T 10 bench-fast $BIN/proscenium-gpu $B -numerics fast -rows 1,2,4,8
T 8 bench-exact $BIN/proscenium-gpu $B -numerics exact -rows 1,4
(cd engine/cuda && T 16 tests-exact $BIN/cuda.test -test.v -test.run 'TestMoERoute|TestMoEGateUpRoute|TestMoECombineNorm|TestBackboneMatchesCPU|TestFusedStep')
(cd engine/cuda && PROSCENIUM_TEST_NUMERICS=fast T 12 tests-fast $BIN/cuda.test -test.v -test.run 'TestBackboneMatchesCPU|TestFusedStep')
(cd /tmp && tar czf ${OUT:-/tmp}/step27b-final.tgz step27b-final)
echo "== steps"; tr '\n' ' ' < $O/steps.log; echo
echo "== tests"; for f in $O/tests-*.log; do echo "$(basename $f): $(grep -c -- '--- PASS' $f) pass, $(grep -c -- '--- FAIL' $f) fail"; done
grep -hE "^(--- FAIL|    --- FAIL)|panic:" $O/tests-*.log | head -12
for f in bench-fast bench-exact; do echo "== $f"; grep -E "^B =|B-row step" $O/$f.log | cut -c1-220; done
