#!/bin/bash
# moe32 (issues 27/30): the decode step's down projections by moe_down2 (kernels/moe.cu): the weight
# loads issued as soon as the expert id is read (before the SwiGLU staging and its barrier), one FP8
# scale load per chunk for a warp's 8 rows, the shared expert read once for up to 4 rows of a B-row
# step in two single-round halves. Chosen by PROSCENIUM_GPU_MOE_DOWN2=1 (default off: the old
# moe_down / moe_down_rows). ≤ 60 s, from the root of a checkout of branch moe32 (merged with main):
#   bash docs/perf/h200-moe32.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and moe32.tgz go to LOGDIR; a summary is printed (failures first, then the figures).
# Hypotheses (docs/PERF.md "moe32"): (1) moe_down2 gives every output the old kernels' bits (exact
# and fast; the backbone under exact the CPU's bits, under fast within 1e-4); (2) the down
# projections alone: B = 1 9.7 → ≈ 7 µs, B = 4 25 → ≈ 15–18 µs (TestMoEDown2Timing prints both); (3)
# the step (bench-backbone -rows 1,2,4,8, old and new alternating): B = 4 ≈ 0.3 ms shorter, B = 1
# ≈ 0.1 ms; (4) with the B-row step's routing in its own launch (PROSCENIUM_GPU_SPLIT_ROUTE=rows)
# B = 4 and 8 shorter again (each of the gate·up's 1024 / 2048 blocks skips its routing prologue).
set -u
B=$(cd "$1" && pwd); O=$(mkdir -p "$2" && cd "$2" && pwd); ROOT=$PWD
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
START=$(date +%s); END=$(( START + 58 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?
  echo "rc=$rc $n $(( $(date +%s) - t ))s" >> $O/steps.log; return $rc; }
{ date -u; git -C $ROOT log --oneline -1; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
C=$B/cuda.test; P=$B/proscenium-gpu
cd $ROOT/engine/cuda
# Correctness, four processes at once (≤ 24 s): moe_down2 against the old kernels and the split
# routing's gate·up against the routed launch (both policies, in one process: the switches flipped
# by the tests); with both switches on, the old kernels' own tests, the expert table's tallies, the
# MoE chain under PDL, the layer, the routed gate·up against MoERoute + the gathered GEMV; the
# backbone against the CPU (exact: bits; fast: 1e-4) and the B-row step against takes alone.
T 20 unit $C -test.v -test.run 'TestMoEDown2MatchesMoEDown|TestMoEDown$|TestMoEGateUpIdsMatchesRouted' &
T 20 on env PROSCENIUM_GPU_MOE_DOWN2=1 PROSCENIUM_GPU_SPLIT_ROUTE=rows $C -test.v -test.run \
  'TestMoEDown$|TestMoEDownRowsMatchesOneRow|TestExpertTable|TestMoEStepChainPDL|TestBackboneMoE|TestMoEGateUpRoute$' &
T 24 backbone-fast env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_MOE_DOWN2=1 PROSCENIUM_GPU_SPLIT_ROUTE=rows $C -test.v \
  -test.run 'TestBackboneMatchesCPU$|TestBackboneStepRowsMatchTakesAlone' &
T 24 backbone-exact env PROSCENIUM_TEST_NUMERICS=exact PROSCENIUM_GPU_MOE_DOWN2=1 PROSCENIUM_GPU_SPLIT_ROUTE=rows $C -test.v \
  -test.run 'TestBackboneMatchesCPU$|TestBackboneStepRowsMatchTakesAlone' &
wait
# Timing: the kernels alone (old and new in one process), then the step, old and new alternating.
T 8 timing $C -test.v -test.run 'TestMoEDown2Timing'
cd $ROOT
# newsplit: moe_down2 and, for B > 1 only, the routing in a launch of its own, the gate·up reading
# its ids (PROSCENIUM_GPU_SPLIT_ROUTE=rows: step27b's open question; its B = 1 figure is new's).
for v in old new newsplit old new; do
  i=$(( ${i:-0} + 1 )); on=0; [ $v != old ] && on=1; sr=; [ $v = newsplit ] && sr=rows
  T 7 bench-$i-$v env PROSCENIUM_GPU_MOE_DOWN2=$on PROSCENIUM_GPU_SPLIT_ROUTE=$sr $P bench-backbone -synthetic full -steps 50 \
    -rows 1,2,4,8 -numerics fast
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/moe32.tgz)
echo "== moe32 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^        --- FAIL|^FAIL|panic:|relative error .* >|differ from the (old kernel's|routed launch's) \(|ids .*, routed launch's" $O/*.log | cut -c1-220 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in unit on backbone-fast backbone-exact; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== moe_down2 and the split routing against the old kernels' bits (counts of lines)"
grep -hoE "(moe_down2|split route) (exact|fast) [a-z· ]+: .*(the same bits|differ from the old kernel's.*)" $O/unit.log | \
  sed -E 's/[0-9]+ values, //' | sort | uniq -c | head -8
echo "== backbone with moe_down2 against the CPU (fast bound 1e-4; exact: 0 values differ)"
for f in backbone-fast backbone-exact; do grep -hE "steps vs CPU: worst row|B-row|rows, experts as" $O/$f.log | \
  sed -E 's/^ *[a-z_]+\.go:[0-9]+: //; s/worst row [0-9]+ at ([^;]+);.*bits: ([0-9]+ of [0-9]+) values differ.*/worst \1, \2 values differ from the CPU/' | \
  sed "s/^/$f: /" | cut -c1-130 | head -4; done
echo "== the down projections alone (µs a launch; TestMoEDown2Timing)"; grep -hE "^timing moe down" $O/timing.log
echo "== the step (ms on the device; bench-backbone -rows 1,2,4,8, fast)"
for i in 1 2 3 4 5; do f=$(ls $O/bench-$i-*.log 2>/dev/null) || continue
  printf "%-14s" "$(basename $f .log | sed 's/bench-//')"; grep -hE "^B = [0-9]+ " $f | sed -E 's/^B = ([0-9]+) +([0-9.]+) ms on the device.*/B\1 \2/' | tr '\n' ' '
  grep -hoE "one take's Step for comparison: [0-9.]+ ms" $f | sed 's/.*: /  one-take /' | tr -d '\n'; echo
done
