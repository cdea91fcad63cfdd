#!/bin/bash
# grouped28 (issue 28): the grouped FP8 expert GEMM that widens each weight and splits each x once
# per block (kernels/gemm.cu gemm_mma_body XS, instances p3m128n{8,16,32}s; the dense p3m64n{16,32}s
# split once too). ≤ 90 s, from the root of
# a checkout of branch grouped28 (or of main after its merge):
#   bash docs/perf/h200-grouped28.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (sm_90 kernels): here,
# bash docs/perf/h200-grouped28-build.sh CHECKOUT (→ CHECKOUT/.carry-grouped28); there,
# bash docs/perf/h200-lead6-unpack.sh .carry-grouped28 BINDIR. Logs and grouped28.tgz go to LOGDIR;
# a summary is printed.
# Hypotheses: (1) every instance agrees with cpu.MatVec as before (fast within 2e-5, exact the CPU's
# bits), every E4M3 code (subnormals, zeros) reaches the MMAs exactly, the fast prefill stays within
# 1e-4 of the CPU on every checkpoint; (2) the 300-row experts take ≈ 0.34 ms a layer (≈ 2× gemm28's
# 0.677), the 64-row dense GEMMs ≈ 1.3× faster, the prefill of 60 / 300 / 700 rows ≈ 27 / 51 / 136 ms
# (28.7 / 65.5 / 147.6 before), docs/PERF.md "grouped28 (unmeasured)".
set -u
B=$(cd "$1" && pwd); O=$(mkdir -p "$2" && cd "$2" && pwd); ROOT=$PWD
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
START=$(date +%s); END=$(( START + 88 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?
  echo "rc=$rc $n $(( $(date +%s) - t ))s" >> $O/steps.log; return $rc; }
{ date -u; git -C $ROOT log --oneline -1; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
C=$B/cuda.test; P=$B/proscenium-gpu
# The GEMM tests name their instances (every tensor-core one and the FP64 ones), so the policy
# changes nothing in them; they run under fast, and the new ones once more under exact at the end.
T 12 kernels-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestChooseGemmFast|TestGemmMmaInstancesCompiled|TestGemmFP8Codes|TestGemmGroupedExperts'
T 24 backbone-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestBackboneMatchesCPU'
T 7 speed env PROSCENIUM_GEMM_SPEED=1 $C -test.v -test.run 'TestGemmFastSpeed'
T 8 bench env PROSCENIUM_GPU_PREFILL_ROWS=512 $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 15 kernels-more env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestGemmGrouped$|TestMoEGroup|TestGemmFP8$|TestGemmBF16$'
T 14 backbone-exact $C -test.v -test.run 'TestBackboneMatchesCPU'
T 6 kernels-exact $C -test.v -test.run 'TestGemmFP8Codes|TestGemmGrouped$'
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/grouped28.tgz)
echo "== grouped28 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|relative error .* >" $O/*.log | cut -c1-200 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
echo "== FP8 codes (worst relative error per instance)"; grep -hE "worst relative error" $O/kernels-fast.log | sed 's/^ *gemm_experts_cuda_test.go:[0-9]*: //' | head -14
echo "== full-geometry experts (fast picks)"; grep -hE "pairs, .* an expert|experts p3m128n(8|16|32)s:" $O/kernels-fast.log | sed 's/^ *//' | cut -c1-140 | head -12
echo "== fast prefill worst rows (bound 1e-4)"; grep -hE "row prefill vs CPU" $O/backbone-fast.log | sed 's/^ *//' | cut -c1-120
echo "== exact prefill (0 = the CPU's bits)"; grep -hE "row prefill vs CPU" $O/backbone-exact.log | sed 's/^ *//' | cut -c1-100
echo "== experts per layer (picked instances)"; grep -hE "experts n=[0-9]+, gate" $O/speed.log | sed 's/^ *gemm_fast_speed_cuda_test.go:[0-9]*: //'
echo "== picked instances"; grep -hE "\*$" $O/speed.log | sed 's/^ *gemm_fast_speed_cuda_test.go:[0-9]*: //' | cut -c1-120
echo "== bench-backbone -prefills 60,300,700 (before: 28.7 / 65.5 / 147.6 ms)"; grep -A4 -E "^rows +prefill ms" $O/bench.log
