#!/bin/bash
# group34 (issue 28): a prefill's grouping of its (row, expert) pairs by expert (kernels/moe.cu) by
# moe_group_warps (each of up to 32 warps ranks its own range of pairs against per-warp 16-bit expert
# counts; a scan over experts × warps gives each warp's base) instead of moe_group (one warp ranks
# every pair, 32 a step: 75 dependent steps at 2 400 pairs, 24 µs a layer in run 2b's ncu). The same
# offsets, rowids and slot, bit for bit. PROSCENIUM_GPU_MOE_GROUP=old picks moe_group (the default
# otherwise: the flip is the one line `var moeGroupWarps = …` in engine/cuda/moe_cuda.go).
# ≤ 45 s, from the root of a checkout of branch group34 (merged with main):
#   bash docs/perf/h200-group34.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and group34.tgz go to LOGDIR; a summary is printed (failures first, then the figures).
# Hypotheses (docs/PERF.md "group34"): (1) both kernels equal the stable sort's definition on every
# input of TestMoEGroup (prefill routings over 256 and 1024 experts, 1 … 4096 pairs; every pair one
# expert; every expert once; descending; hot experts; runs across the warps' steps), the fast and exact
# backbones pass with it; (2) one grouping 24 → ≈ 3–5 µs at 2 400 pairs, ≈ 40 → ≈ 4–6 µs at 4 096, so the
# 300-row prefill ≈ 0.8 ms shorter (40 layers × ≈ 20 µs), the 700-row one ≈ 2 ms (two passes).
set -u
B=$(cd "$1" && pwd); O=$(mkdir -p "$2" && cd "$2" && pwd); ROOT=$PWD
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
START=$(date +%s); END=$(( START + 44 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?
  echo "rc=$rc $n $(( $(date +%s) - t ))s" >> $O/steps.log; return $rc; }
{ date -u; git -C $ROOT log --oneline -1; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
C=$B/cuda.test; P=$B/proscenium-gpu
cd $ROOT/engine/cuda
# Correctness, four processes at once (≤ 22 s): both kernels against the definition (and the host
# emulation against it); the fast backbone (300-row prefill through the grouped experts) and the exact
# one's tiny checkpoints (the CPU's bits) with moe_group_warps; the grouped experts' GEMMs.
T 22 group $C -test.v -test.run 'TestMoEGroup$|TestMoEGroupWarpsEmulation' &
T 22 backbone-fast env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_MOE_GROUP=new $C -test.v \
  -test.run 'TestBackboneMatchesCPU$|TestBackboneMoE$' &
T 22 backbone-exact env PROSCENIUM_TEST_NUMERICS=exact PROSCENIUM_GPU_MOE_GROUP=new $C -test.v \
  -test.run 'TestBackboneMatchesCPU$/tiny' &
T 22 experts env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_MOE_GROUP=new $C -test.v -test.run 'TestGemmGroupedExperts' &
wait
# Timing, one at a time: one grouping, old against new in one process (480, 2 400, 4 096 pairs); the
# prefill old / new / old / new.
T 8 timing $C -test.v -test.run 'TestMoEGroupTiming'
cd $ROOT
for v in old new old2 new2; do
  T 6 bench-$v env PROSCENIUM_GPU_MOE_GROUP=${v%2} $P bench-backbone -synthetic full -numerics fast \
    -prefills 60,300,700 -steps 5
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/group34.tgz)
echo "== group34 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|relative error .* >|: offsets\[|slot [0-9-]+, want|row [0-9-]+, want" $O/*.log | cut -c1-220 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in group backbone-fast backbone-exact experts; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== TestMoEGroup: inputs each kernel equals the definition on"; grep -cE "^    --- PASS: TestMoEGroup/" $O/group.log
echo "== fast 300-row prefill against the CPU, worst row of the four checkpoints (bound 1e-4)"
echo "$(grep -hE "row prefill vs CPU: worst" $O/backbone-fast.log | sed -E 's/.*worst row [0-9]+ at ([^;]+);.*/\1/' | tr '\n' ' ')"
echo "== one grouping, mean of 100 launches in a graph with PDL edges, 5 replays (µs; × = old / new)"
grep -hE "^timing moe group" $O/timing.log | sed 's/^timing moe group //'
echo "== bench-backbone prefill ms at 60 / 300 / 700 rows (without MoE)"
for v in old new old2 new2; do echo "$v: $(grep -A3 -E "^rows +prefill ms" $O/bench-$v.log | awk 'NR>1 {p=p" "$2; m=m" "$3} END {print p " (" m " )"}')"; done
