#!/bin/bash
# gemm28's checks for the lead's final run on merged main (≤ 45 s; run from the root of a /work/main
# copy): bash docs/perf/h200-gemm28-final.sh BINDIR, where BINDIR holds cuda.test and proscenium-gpu
# built from main. The tensor-core GEMM core (gemm_mma_*), moe_group and the grouped experts against
# the CPU (fast within 1e-4; exact the CPU's bits), then the prefill figures.
set -u
B=$1; ROOT=$PWD; O=${OUT:-/tmp}/gemm28-final; mkdir -p $O
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + 44 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?; echo "rc=$rc $n" >> $O/steps.log; return $rc; }
C=$B/cuda.test; P=$B/proscenium-gpu
T 8 kernels $C -test.v -test.run 'TestMoEGroup|TestChooseGemmFast|TestGemmGrouped'
T 17 fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestBackboneMatchesCPU'
T 11 exact $C -test.v -test.run 'TestBackboneMatchesCPU'
T 6 bench-512 env PROSCENIUM_GPU_PREFILL_ROWS=512 $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
echo "== gemm28 steps"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== gemm28 failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:" $O/kernels.log $O/fast.log $O/exact.log | head -8
echo "== gemm28 fast worst rows (bound 1e-4)"; grep -hE "300-row prefill vs CPU: worst" $O/fast.log | sed 's/^ *backbone_cuda_test.go:[0-9]*: //' | cut -c1-70
echo "== gemm28 exact (0 = the CPU's bits)"; grep -hE "300-row prefill vs CPU: worst" $O/exact.log | sed 's/^ *backbone_cuda_test.go:[0-9]*: //' | cut -c1-60
echo "== gemm28 bench (512-row passes)"; tail -n 4 $O/bench-512.log
