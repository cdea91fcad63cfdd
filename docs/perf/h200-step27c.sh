#!/bin/bash
# step27c (issue 27): step27b's decode step re-landed with the fault of its fast step fixed (the fast
# combine loaded a routing weight before its PDL wait) and the routed gate·up reading experts through
# the expert cache's table; ≤ 90 s on an H200. Run from the root of a checkout of branch step27c (the
# golden checkpoints under engine/cpu/testdata):
#   bash docs/perf/h200-step27c.sh BIN [OUT]
# BIN holds, built from this branch after `make kernels` (sm_90 is enough):
#   cuda.test            go test -tags cuda -c -o BIN/cuda.test ./engine/cuda
#   kernels.test         go test -tags cuda -c -o BIN/kernels.test ./kernels
#   proscenium-gpu.test  go test -tags cuda -c -o BIN/proscenium-gpu.test ./cmd/proscenium-gpu
#   proscenium-gpu       go build -tags cuda -o BIN/proscenium-gpu ./cmd/proscenium-gpu
# Logs in OUT (default /tmp/step27c); prints the steps, the test verdicts and the step figures.
set -u
B=${1:?usage: h200-step27c.sh BIN [OUT]}; O=${2:-/tmp/step27c}; rm -rf $O; mkdir -p $O
B=$(cd "$B" && pwd); O=$(cd "$O" && pwd)  # the tests run in their package directories
export PROSCENIUM_GPU_CKPTS=$PWD/engine/cpu/testdata/backbone/ckpt
START=$(date +%s)
left() { echo $((88 - ($(date +%s) - START))); }
T() { local s=$1; shift; local n=$1; shift; local l; l=$(left); [ $l -lt 3 ] && { echo "skip $n" >> $O/steps.log; return; }
  [ $s -gt $l ] && s=$l; local t0=$(date +%s)
  timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s) - t0 ))s" >> $O/steps.log; }
CT="$B/cuda.test -test.v"
# 0. (CPU only, beside the rest) the compiled kernels: no global access before a PDL wait.
(cd kernels && timeout 60 $B/kernels.test -test.v -test.run '^(TestPreWaitAccessesParse|TestNoGlobalAccessBeforePDLWait)$' > $O/sass.log 2>&1; echo "rc=$? sass" >> $O/steps.log) &
# 1. The focused checks, both policies inside each: the step with PDL on and off (one-take, fused,
#    B-row), the MoE chain of eight layers with PDL on and off, the routed gate·up against the two
#    launches with and without an expert table, the expert kernels through the table, the fused step.
(cd engine/cuda && T 22 focused $CT -test.run '^(TestBackboneStepPDLOrder|TestMoEStepChainPDL|TestMoEGateUpRoute|TestExpertTable|TestFusedStep)$')
# 2. Against the CPU under fast (the run that failed on 15a7c02), then the B-row step against takes alone.
(cd engine/cuda && PROSCENIUM_TEST_NUMERICS=fast T 24 backbone-fast $CT -test.run '^(TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone)$')
# 3. The step's figures, fast, B = 1, 2, 4, 8 (step27b's W1: 2.201 / 2.821 / 3.897 / 6.345 ms).
T 10 bench-fast $B/proscenium-gpu bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
# 4. Exact: the CPU's bits, and the B-row step against takes alone.
(cd engine/cuda && T 18 backbone-exact $CT -test.run '^(TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone)$')
# 5. A tiered engine's cache (its step now routes in the gate·up launch through the table).
(cd cmd/proscenium-gpu && T 8 hot-set $B/proscenium-gpu.test -test.v -test.run '^TestCUDAExpertCacheHotSet$')
T 6 bench-exact $B/proscenium-gpu bench-backbone -synthetic full -steps 50 -rows 1,4 -numerics exact
wait
echo "== steps ($(( $(date +%s) - START )) s)"; tr '\n' ' ' < $O/steps.log; echo
echo "== tests"
for f in sass focused backbone-fast backbone-exact hot-set; do
  [ -f $O/$f.log ] && echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"
done
grep -hE "^(--- FAIL|    --- FAIL|        --- FAIL)|panic:|differ from the same launches|values differ from the launches|global memory accessed" $O/*.log | cut -c1-240 | head -20
grep -hE "steps vs CPU: worst|as prefill vs as steps: worst|fused step: worst|worst step row|same bits with and without|routed gate·up in one launch" $O/backbone-fast.log $O/focused.log | cut -c1-200 | head -16
for f in bench-fast bench-exact; do echo "== $f"; grep -E "^B =|B-row step" $O/$f.log | cut -c1-220; done
