#!/bin/bash
# rows34 (issues 27/30): the B-row decode step's routed gate·up and down projections by persistent
# warps that stream (row tile, pair) items through a 4-stage cp.async ring each (kernels/moe_rows34.cu:
# moe_rows34_gate_up in moe_gate_up_ids_*'s place, moe_rows34_down in moe_down2's; fast, FP8, n > 1).
# Chosen by PROSCENIUM_GPU_MOE_ROWS=1 (gateup / down: one of them; default off). ≤ 75 s, from the root
# of a checkout of branch rows34 (merged with main):
#   bash docs/perf/h200-rows34.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and rows34.tgz go to LOGDIR; a summary is printed (failures first, then the figures).
# Hypotheses (docs/PERF.md "rows34"): (1) both kernels give the old kernels' bits (fast; the same
# chains of operations) and stay within 1e-4 of a float64 host reference, with rows choosing the same,
# different or half the same experts; the step's own calls (MoEGateUpRoute, MoEDownRows) with the
# switch on pass the old kernels' tests; B = 1 and exact unchanged; (2) the launches alone
# (TestMoERows34Timing, µs): B = 4 gate·up ≈ 19, down ≈ 11; B = 8 ≈ 33 and ≈ 17; (3) the step (bench
# -rows 1,2,4,8, old and new alternating): B = 4 3.55 → ≈ 2.8 ms, B = 8 5.46 → ≈ 3.9 ms, B = 1 the same.
set -u
B=$(cd "$1" && pwd); O=$(mkdir -p "$2" && cd "$2" && pwd); ROOT=$PWD
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
START=$(date +%s); END=$(( START + 73 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?
  echo "rc=$rc $n $(( $(date +%s) - t ))s" >> $O/steps.log; return $rc; }
{ date -u; git -C $ROOT log --oneline -1; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
C=$B/cuda.test; P=$B/proscenium-gpu
cd $ROOT/engine/cuda
# Correctness, four processes at once (≤ 25 s): the kernels against the old ones and the host (fast,
# set by the tests; 2, 3, 4, 5, 8 rows; random / same / disjoint / half-shared experts), the step's
# routed call with the switch (and one row: the same bits); with the switch on, the old kernels'
# tests through the step's calls (rows34 against moe_down_rows and the routed launch, bits expected;
# MoEDownRows against the one-row kernel, bits required), the expert table, the MoE chain under PDL;
# the backbone against the CPU and the B-row step against takes alone (their checkpoints are narrower
# than rows34's widths: the old kernels run there; this guards the switch's plumbing).
T 25 unit $C -test.v -test.run 'TestMoERows34MatchesOld|TestMoERows34Route|TestMoERows34ExpertTable' &
T 25 on env PROSCENIUM_GPU_MOE_ROWS=1 $C -test.v -test.run \
  'TestMoEDown2MatchesMoEDown|TestMoEGateUpIdsMatchesRouted|TestMoEDownRowsMatchesOneRow|TestMoEGateUpRoute$|TestExpertTable|TestMoEStepChainPDL' &
T 25 backbone env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_MOE_ROWS=1 $C -test.v \
  -test.run 'TestBackboneMatchesCPU$|TestBackboneStepRowsMatchTakesAlone' &
# The B-row step at the full geometry (bench-backbone's random weights), the switch off then on in
# one process: steps of 2, 4 and 8 takes, the old kernels' bits expected, rows within 1e-4.
T 25 full $B/proscenium-gpu.test -test.v -test.run 'TestStepRowsRows34FullGeometry' &
wait
# Timing: the launches alone (old and rows34 in one process), then the step, old and new alternating.
T 10 timing $C -test.v -test.run 'TestMoERows34Timing'
cd $ROOT
for v in old new old new gateup; do
  i=$(( ${i:-0} + 1 )); on=0; [ $v = new ] && on=1; [ $v = gateup ] && on=gateup
  T 7 bench-$i-$v env PROSCENIUM_GPU_MOE_ROWS=$on $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/rows34.tgz)
echo "== rows34 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^        --- FAIL|^FAIL|panic:|relative error .* >|differ from (the old kernel's|the routed launch's|moe_down's) \(|must not change|ids .*, (routed launch's|without rows34)" $O/*.log | cut -c1-220 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in unit on backbone full; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== rows34 against the old kernels' bits (counts of lines)"
grep -hoE "rows34 [a-z· ]+: .*(the old kernel's bits|differ from the old kernel's bits, by up to [0-9]+ ULP)" $O/unit.log | \
  sed -E 's/[0-9]+ values, //; s/[0-9]+ of [0-9]+ values/some values/' | sort | uniq -c | head -8
echo "== against the host's float64 (worst relative error; bound 1e-4)"
grep -hoE "rows34 against the host: relative error [0-9.e+-]+" $O/unit.log | awk '{print $NF}' | sort -g | tail -1
echo "== with the switch on, the old kernels' tests' bits lines (counts)"
grep -hoE "(moe_down2|split route) (exact|fast) [a-z· ]+: .*(the same bits|differ from the old kernel's.*ULP)" $O/on.log | \
  sed -E 's/[0-9]+ values, //; s/[0-9]+ of [0-9]+ values/some values/' | sort | uniq -c | head -8
echo "== backbone, fast, switch on (bound 1e-4)"; grep -hE "steps vs CPU: worst row|B-row" $O/backbone.log | sed -E 's/^ *[a-z_]+\.go:[0-9]+: //' | cut -c1-120 | head -4
echo "== the B-row step at the full geometry, rows34 against the old kernels"; grep -hoE "rows34 full-geometry step .*" $O/full.log | head -6
echo "== the launches alone (µs; TestMoERows34Timing)"; grep -hE "^timing rows34" $O/timing.log | sed 's/^timing rows34 //'
echo "== the step (ms on the device; bench-backbone -rows 1,2,4,8, fast)"
for i in 1 2 3 4 5; do f=$(ls $O/bench-$i-*.log 2>/dev/null) || continue
  printf "%-10s" "$(basename $f .log | sed 's/bench-//')"; grep -hE "^B = [0-9]+ " $f | sed -E 's/^B = ([0-9]+) +([0-9.]+) ms on the device.*/B\1 \2/' | tr '\n' ' '
  grep -hoE "one take's Step for comparison: [0-9.]+ ms" $f | sed 's/.*: /  one-take /' | tr -d '\n'; echo
done
echo "== experts column (new): $(grep -hoE 'experts: [^;]+' $O/bench-2-new.log 2>/dev/null | sort -u | tr '\n' ' ')"
