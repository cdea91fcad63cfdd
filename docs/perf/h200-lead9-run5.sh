#!/bin/bash
# Lead, session 9, run 5 (one call, ≤ 100 s): the step kernels' residual-then-norm tail shared
# by add_rmsnorm_zc and moe_combine_norm (kernels/row_norm.cuh; the same operations in the same
# order): the backbone against the CPU under both policies (exact: the CPU's bits), the step
# with PDL on and off, the MoE chain, the fused step, B-row steps against takes alone; the step's
# figures and a take.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run5.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run5; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-100} ))
bash docs/perf/h200-lead6-unpack.sh .carry-fa $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $O/machine.txt 2>&1
C=$X/cuda.test; P=$X/proscenium-gpu
R='^(TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestMoEStepChainPDL|TestFusedStep|TestMoEGateUpRoute)$'
cd engine/cuda
T 45 fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run "$R" &
T 45 exact $C -test.v -test.run "$R" &
wait
cd $ROOT
T 8 step $P bench-backbone -synthetic full -steps 50 -rows 1,4 -numerics fast
T 15 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -numerics fast
(cd /tmp && tar czf $OUT/run5.tgz run5)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|^        --- FAIL|panic:" $O/*.log | sort | uniq -c | head -20
for f in fast exact; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail; end: $(tail -n 1 $O/$f.log)"; done
grep -hE "steps vs CPU: worst|bits:" $O/exact.log | sed 's/^ *//' | cut -c1-120 | sort | uniq -c | head -8
grep -hE "^B =|B-row step" $O/step.log | cut -c1-160
grep -hE "real-time|first audio|backbone step" $O/take.log
