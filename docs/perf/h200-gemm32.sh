#!/bin/bash
# gemm32 (issue 28): the grouped FP8 experts' GEMM in wide families (kernels/gemm.cu GEMM_MMA_WIDE:
# KS sub-steps of 32 columns a cp.async ring stage, one wait and one barrier a stage, the ring in
# dynamic shared memory beyond 48 KB): k32b2 (32 columns a stage, up to 12 stages in 112 KB, two
# blocks an SM: the ring's depth alone), k64b2 (64 columns, 112 KB, two blocks), k128b1 (128 columns,
# 224 KB, one block), k32b3 / k64b3 (three blocks an SM in 74 KB, 80 registers: 24 warps against 16).
# Chosen by PROSCENIUM_GPU_GEMM_GROUPED (default: none, the tiles as on main; N8/N16/N32 a family per
# tile); PROSCENIUM_GPU_GEMM_DENSE_WIDE puts the dense GEMMs whose tile is a split one (gemm31's rule:
# the 300-row out, router, shared down; the 60-row DeltaNet in and qkv) in a family too (default off).
# ≤ 60 s, from the root of a checkout of branch gemm32 (merged with main):
#   bash docs/perf/h200-gemm32.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and gemm32.tgz go to LOGDIR; a summary is printed.
# Hypotheses (docs/PERF.md "gemm32"): (1) every wide instance gives its tile's bits (same MMAs, same
# order), every E4M3 code reaches it, the fast prefill with each family stays within 1e-4 of the CPU;
# (2) the experts (1.55 TB/s at 300 rows, 1.09 at 700) are bound by the per-step latency behind a
# barrier every 4 KB of weights with 4 warps a scheduler (ncu: 0.51 issued a cycle): the wide families
# take them to ≈ 2.1–2.4 TB/s, the 300-row prefill 46.5 → ≈ 40–42 ms, 700 rows 106.6 → ≈ 97–100 ms;
# k32b2 (depth alone) and the b3 families (more warps alone) tell the causes apart.
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
K='p3m128n(8|16|32)s(k[0-9]+b[123])?'  # the grouped tiles and their wide instances
cd $ROOT/engine/cuda
# Correctness, four processes at once (≤ 22 s): the wide instances against their tiles' bits (dense,
# grouped, odd shapes, passes) and every E4M3 code; the full geometry's experts against the CPU; the
# fast backbone with k64b2, k128b1 and k64b3, the last with the dense split tiles in k64b3 too (k32b*
# are the same code with one sub-step a stage).
T 22 wide env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMM_KERNELS="$K" $C -test.v \
  -test.run 'TestChooseGemm|TestGemmMmaInstancesCompiled|TestGemmWide|TestGemmFP8Codes' &
T 22 experts env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMM_KERNELS="$K" $C -test.v -test.run 'TestGemmGroupedExperts' &
T 22 backbone-k64b2 env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_GROUPED=k64b2 $C -test.v \
  -test.run 'TestBackboneMatchesCPU$' &
T 22 backbone-k128b1 env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_GROUPED=k128b1 $C -test.v \
  -test.run 'TestBackboneMatchesCPU$' &
T 22 backbone-k64b3 env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_GROUPED=k64b3 PROSCENIUM_GPU_GEMM_DENSE_WIDE=k64b3 $C -test.v \
  -test.run 'TestBackboneMatchesCPU$' &
wait
# Timing, one at a time: the experts' tile against each family in one process (TestGemmFastSpeed's
# "gemm32" lines); the prefill under each family, the old path first and last.
T 10 speed env PROSCENIUM_GEMM_SPEED=1 $C -test.v -test.run 'TestGemmFastSpeed'
cd $ROOT
# kNbM: the experts in that family; kNbMd: the dense split tiles too; again: none a second time.
for v in none k64b2 k64b2d k64b3 k128b1 k32b2 k32b3 again; do
  f=${v%d}; [ $f = again ] && f=none; d=; [ $v != ${v%d} ] && d=$f
  T 6 bench-$v env PROSCENIUM_GPU_GEMM_GROUPED=$f PROSCENIUM_GPU_GEMM_DENSE_WIDE=$d $P bench-backbone -synthetic full -numerics fast \
    -prefills 60,300,700
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/gemm32.tgz)
echo "== gemm32 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|relative error .* >|must give its bits|shared memory" $O/*.log | cut -c1-220 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in wide experts backbone-k64b2 backbone-k128b1 backbone-k64b3; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== FP8 codes through the wide instances (worst relative error)"; grep -hE "k[0-9]+b[123] grouped .*worst relative error" $O/wide.log | sed 's/^ *gemm_experts_cuda_test.go:[0-9]*: //' | sort -k7 -g | tail -2
echo "== fast 300-row prefill against the CPU, worst row of the four checkpoints (bound 1e-4)"
for f in backbone-k64b2 backbone-k128b1 backbone-k64b3; do echo "$f: $(grep -hE "row prefill vs CPU: worst" $O/$f.log | sed -E 's/.*worst row [0-9]+ at ([^;]+);.*/\1/' | tr '\n' ' ')"; done
echo "== experts and dense split tiles: the tile against each wide family (ms; × = tile / family)"; grep -hE "gemm32 " $O/speed.log | sed 's/^ *gemm_fast_speed_cuda_test.go:[0-9]*: gemm32 //' | cut -c1-260
echo "== bench-backbone prefill ms at 60 / 300 / 700 rows (without MoE)"
for v in none k64b2 k64b2d k64b3 k128b1 k32b2 k32b3 again; do echo "$v: $(grep -A3 -E "^rows +prefill ms" $O/bench-$v.log | awk 'NR>1 {p=p" "$2; m=m" "$3} END {print p " (" m " )"}')"; done
