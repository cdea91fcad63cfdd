#!/bin/bash
# gemm31 (issue 28): the tensor-core GEMM's variants (kernels/gemm.cu GEMM_MMA_PIPE "q": each half
# step's fragments loaded while the previous half's MMAs run, BF16 dense A by ldmatrix; GEMM_MMA_PF
# "l": cp.async asks L2 for 256 bytes around each piece; "ql" both), chosen by
# PROSCENIUM_GPU_GEMM_VARIANT (default: none, the tiles as on main). ≤ 60 s, from the root of a
# checkout of branch gemm31 (merged with main):
#   bash docs/perf/h200-gemm31.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh,
# unpacked by h200-lead6-unpack.sh). Logs and gemm31.tgz go to LOGDIR; a summary is printed.
# Hypotheses (docs/PERF.md "gemm31"): (1) every variant in the tile's k order gives the tile's bits
# (l always; q and ql on FP8 and grouped tiles), the BF16 dense q / ql are within 2e-5 of cpu.MatVec
# like the tiles, every E4M3 code reaches them, the fast prefill with ql stays within 1e-4 of the
# CPU; (2) q cuts the BF16 dense GEMMs' time (≈ 30 % fewer instructions a step on 128 × 64, no
# register moves before the MMAs), l the FP8 experts' (32-byte row pieces a step, DRAM pages
# reopened), the prefill of 300 rows 56.9 → ≈ 47–52 ms if both hold; (3) gemm31's dense tile rule
# (PROSCENIUM_GPU_GEMM_TILES=31: 128-row split-once tiles from one block per SM) ≈ 1 ms more off a
# 300- or 700-row prefill (session 9's run-4 kernel timings).
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
V='p3m[0-9]+n[0-9]+s?(q|l|ql)'  # every variant, no tile
cd $ROOT/engine/cuda
# Correctness, four processes at once (≤ 25 s): the variants against their tiles and the CPU, every
# E4M3 code through each variant; the grouped variants at full geometry; the fast backbone with ql.
T 24 variants env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMM_KERNELS="$V" $C -test.v \
  -test.run 'TestChooseGemmFast|TestGemmMmaInstancesCompiled|TestGemmMmaVariants|TestGemmFP8Codes' &
T 24 experts env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMM_KERNELS='p3m128n(8|16|32)s(q|l|ql)' $C -test.v \
  -test.run 'TestGemmGroupedExperts' &
T 24 backbone-ql env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_VARIANT=ql $C -test.v -test.run 'TestBackboneMatchesCPU$' &
T 24 backbone-t31ql env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_VARIANT=ql PROSCENIUM_GPU_GEMM_TILES=31 $C -test.v \
  -test.run 'TestBackboneMatchesCPU$' &
wait
# Timing, one at a time: every tile and the picks' variants; the prefill under each variant.
T 10 speed env PROSCENIUM_GEMM_SPEED=1 $C -test.v -test.run 'TestGemmFastSpeed'
cd $ROOT
for v in none ql t31ql q l; do  # most telling first: the budget may cut the last
  e=${v#t31}; [ $v = none ] && e=; t=; [ $v != ${v#t31} ] && t=31
  T 6 bench-$v env PROSCENIUM_GPU_GEMM_VARIANT=$e PROSCENIUM_GPU_GEMM_TILES=$t $P bench-backbone -synthetic full -numerics fast \
    -prefills 60,300,700
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/gemm31.tgz)
echo "== gemm31 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|relative error .* >|must give its bits" $O/*.log | cut -c1-220 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in variants experts backbone-ql backbone-t31ql; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== ldmatrix k order against the tiles (BF16 dense q, ql)"; grep -hE "ldmatrix k order" $O/variants.log | sed 's/^ *gemm_variants_cuda_test.go:[0-9]*: //' | sort | uniq -c | sort -rn | head -6
echo "== FP8 codes through the variants (worst relative error)"; grep -hE "worst relative error" $O/variants.log | sed 's/^ *gemm_experts_cuda_test.go:[0-9]*: //' | sort -k7 -g | tail -3
for f in backbone-ql backbone-t31ql; do echo "== fast prefill, $f, worst rows (bound 1e-4)"; grep -hE "row prefill vs CPU" $O/$f.log | sed 's/^ *//' | cut -c1-120; done
echo "== tiles against their variants (ms; × = tile / variant)"; grep -hE "gemm31 " $O/speed.log | sed 's/^ *gemm_fast_speed_cuda_test.go:[0-9]*: gemm31 //' | cut -c1-150
for v in none ql t31ql q l; do echo "== bench-backbone, $v"; grep -A4 -E "^rows +prefill ms" $O/bench-$v.log | cut -c1-100; done
