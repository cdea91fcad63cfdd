#!/bin/bash
# dense33 (issue 28): split-K for the prefill's dense GEMMs (kernels/gemm.cu GEMM_MMA_SPLITK, instance
# gemm_mma_*_p3m128n64qz: the 128 × 64 tile with gemm31's q, its 32-column k steps over the grid's z,
# each split's float32 sums added into Y by red.global.add.f32 after a memset of Y). Chosen by
# PROSCENIUM_GPU_GEMM_SPLITK (engine/cuda gemm_fast.go gemmSplitFor): unset/none as main; "on" the rule
# (where the 128 × 64 grid is short of 2 blocks an SM and the matrix has ≥ 32 steps: the count ≤ 16 of
# least ⌈B·Z/264⌉·(⌈T/Z⌉ + 4)); N the rule with at most N splits (2: bit-reproducible); "all" every
# dense GEMM split (a check: the tiny checkpoints' projections are too small for the rule).
# PROSCENIUM_GPU_GEMM_DENSE_DEEP=k32b2 runs the 128 × 64 q picks (split or not) in a deep ring
# (kernels/gemm.cu GEMM_MMA_DEEP: 7 stages in 112 KB of dynamic shared memory against 3 in 48 KB).
# ≤ 60 s, from the root of a checkout of branch dense33 (merged with main):
#   bash docs/perf/h200-dense33.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and dense33.tgz go to LOGDIR; a summary is printed.
# Hypotheses (docs/PERF.md "dense33"): (1) every split count gives the tile's result within 1e-5 and
# the CPU's within 2e-5 (BF16 and FP8, splits inside a scale block, strided Y untouched outside the
# output), two splits the same bits twice, the deep ring its tile's bits, the fast prefill within 1e-4
# of the CPU with "on", "all" (+ deep) and "2";
# (2) the out projection (0.118 ms at 300 rows on 128 × 32 s: 160 blocks, 1.2 an SM) and router + shared
# (0.043 ms) are bound by too few warps an SM: split 3 and 5 ways on 128 × 64 q they take ≈ 0.06 and
# ≈ 0.025 ms; the prefill 44.2 → ≈ 41 ms at 300 rows, 98.1 → ≈ 95 at 700, 20.8 → ≈ 18 at 60; (3) the
# deep ring: if q's one tile in flight stalls its steps, DeltaNet in and qkv gain (not estimated).
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
# Correctness, four processes at once (≤ 22 s): the split-K instance with every count against its tile
# and the CPU; the fast backbone (300-row prefill and 40 steps, four checkpoints) with the rule ("on":
# on the tiny geometries only the "like" attention out, 1024 columns, splits) and with every dense GEMM
# split ("all", with the deep ring), and with at most two splits.
T 22 split env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestChooseGemm|TestGemmMmaInstancesCompiled|TestGemmSplitK' &
T 22 backbone-on env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_SPLITK=on $C -test.v -test.run 'TestBackboneMatchesCPU$' &
T 22 backbone-all env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_SPLITK=all PROSCENIUM_GPU_GEMM_DENSE_DEEP=k32b2 $C -test.v -test.run 'TestBackboneMatchesCPU$' &
T 22 backbone-2 env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_SPLITK=2 $C -test.v -test.run 'TestBackboneMatchesCPU$' &
wait
# Timing, one at a time: every split count against the default pick on the full geometry's dense
# shapes in one process (TestGemmFastSpeed's "dense33" lines, the memset included); the prefill with
# none, the rule, the rule with at most 2 splits, the deep ring alone and with the rule, none again
# (the speed step ≈ 8 s: ≈ 150 timings more than gemm32's 3 s run).
T 14 speed env PROSCENIUM_GEMM_SPEED=1 $C -test.v -test.run 'TestGemmFastSpeed'
cd $ROOT
for v in none on 2 deep on-deep again; do
  f=none d=; case $v in on|2) f=$v;; deep) d=k32b2;; on-deep) f=on d=k32b2;; esac
  T 6 bench-$v env PROSCENIUM_GPU_GEMM_SPLITK=$f PROSCENIUM_GPU_GEMM_DENSE_DEEP=$d $P bench-backbone -synthetic full \
    -numerics fast -prefills 60,300,700
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/dense33.tgz)
echo "== dense33 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|relative error .* >|must give the same bits|must give its bits|not the poison" $O/*.log | cut -c1-220 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in split backbone-on backbone-all backbone-2; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== split-K: worst relative error against the CPU and against the unsplit tile (every count, case)"
grep -hE "split-K p3m128n64qz[0-9]+: relative error" $O/split.log | sed -E 's/.*(qz[0-9]+): relative error ([^ ]+).*/\2 \1/' | sort -g | tail -1 | sed 's/^/CPU: /'
grep -hE "qz[0-9]+ against p3m128n64q: relative error" $O/split.log | sed -E 's/.*(qz[0-9]+) against.*relative error ([^ ]+).*/\2 \1/' | sort -g | tail -1 | sed 's/^/tile: /'
echo "== fast 300-row prefill against the CPU, worst row of the four checkpoints (bound 1e-4)"
for f in backbone-on backbone-all backbone-2; do echo "$f: $(grep -hE "row prefill vs CPU: worst" $O/$f.log | sed -E 's/.*worst row [0-9]+ at ([^;]+);.*/\1/' | tr '\n' ' ')"; done
echo "== dense shapes: the default pick against each split count (ms; × = pick / split; <rule: on's count)"
grep -hE "dense33 " $O/speed.log | grep -v "dense33 deep" | sed 's/^ *gemm_fast_speed_cuda_test.go:[0-9]*: dense33 //' | cut -c1-320
echo "== the deep ring (k32b2) against the 128 × 64 q tile, and on the rule's split (ms; × = shallow / deep)"
grep -hE "dense33 deep" $O/speed.log | sed 's/^ *gemm_fast_speed_cuda_test.go:[0-9]*: dense33 deep //' | cut -c1-200
echo "== bench-backbone prefill ms at 60 / 300 / 700 rows (without MoE)"
for v in none on 2 deep on-deep again; do echo "$v: $(grep -A3 -E "^rows +prefill ms" $O/bench-$v.log | awk 'NR>1 {p=p" "$2; m=m" "$3} END {print p " (" m " )"}')"; done
