#!/bin/bash
# gemm28 run 1 (≤ 118 s, from the root of a /work/main copy): the rewritten tensor-core GEMM core
# (gemm_mma_*) and grouped experts by default under fast from 2 pairs an expert. Kernel tests against
# cpu.MatVec (relative errors of two- and three-part instances) and moe_group (warp ranks), the backbone against
# the CPU under fast with three and two parts and under exact, the GEMM instances' speeds, bench-backbone.
set -u
ROOT=$PWD; X=/tmp/gemm28; O=/tmp/g28out; mkdir -p $X $O
bash docs/perf/h200-lead6-unpack.sh $ROOT/.carry-gemm28 $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + 114 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?; echo "rc=$rc $n" >> $O/steps.log; return $rc; }
{ date -u; cat $ROOT/.carry-gemm28/REV; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu; C=$X/cuda.test
T 22 kernels $C -test.v -test.run 'TestGemmBF16|TestGemmFP8|TestGemmGrouped|TestChooseGemmFast|TestMoEGroup'
T 28 fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestBackboneMatchesCPU|TestBackboneMoE|TestTowerPromptRows'
T 12 fast-2parts env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_PARTS=2 $C -test.v -test.run 'TestBackboneMatchesCPU'
T 13 speed env PROSCENIUM_GEMM_SPEED=1 $C -test.v -test.run 'TestGemmFastSpeed'
T 14 bench-512 env PROSCENIUM_GPU_PREFILL_ROWS=512 $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 10 bench-64 $P bench-backbone -synthetic full -numerics fast -prefills 60,300
T 10 exact $C -test.v -test.run 'TestBackboneMatchesCPU'
(cd /tmp && tar czf $OUT/gemm28.tgz g28out)
echo "== steps"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|relative error .* >" $O/*.log | cut -c1-200 | head -16
echo "== worst rows"; grep -hE "row prefill vs CPU: worst|experts as .*worst" $O/fast.log $O/fast-2parts.log $O/exact.log | sed 's/^ *//' | cut -c1-150 | head -16
echo "== kernel errors (max per instance)"; grep -hoE "gemm [a-z ]*p[23]m[0-9]+n[0-9]+: relative error [0-9.e-]+" $O/kernels.log | awk '{k=$(NF-3); v=$NF; if (v+0 > m[k]+0) m[k]=v} END {for (k in m) print k, m[k]}' | sort | tr '\n' ';'; echo
echo "== bench"; tail -n 4 $O/bench-512.log; tail -n 3 $O/bench-64.log
echo "== speed (chosen)"; grep -hE "\*$" $O/speed.log | sed 's/^ *gemm_fast_speed_cuda_test.go:[0-9]*: //' | cut -c1-140 | head -40
