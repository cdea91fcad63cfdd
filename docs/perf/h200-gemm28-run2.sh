#!/bin/bash
# gemm28 run 2 (≤ 58 s, from the root of a /work/main copy): three-part tensor-core GEMMs only, dense
# tiles chosen for two blocks an SM, each part's MMAs over the fragments in a row (independent MMAs). Kernel tests (moe_group, grouped and dense FP8 GEMMs against
# cpu.MatVec), the backbone against the CPU under fast, bench-backbone, a 10 s reference take.
set -u
ROOT=$PWD; X=/tmp/gemm28; O=/tmp/g28out; mkdir -p $X $O
bash docs/perf/h200-lead6-unpack.sh $ROOT/.carry-gemm28 $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + 54 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?; echo "rc=$rc $n" >> $O/steps.log; return $rc; }
{ date -u; cat $ROOT/.carry-gemm28/REV; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu; C=$X/cuda.test
T 13 kernels $C -test.v -test.run 'TestMoEGroup|TestChooseGemmFast|TestGemmGrouped|TestGemmFP8/(60x2048.8192|ragged|strided|tiny)/'
T 14 fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestBackboneMatchesCPU'
T 5 speed env PROSCENIUM_GEMM_SPEED=1 $C -test.v -test.run 'TestGemmFastSpeed'
T 6 bench-512 env PROSCENIUM_GPU_PREFILL_ROWS=512 $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 5 bench-64 $P bench-backbone -synthetic full -numerics fast -prefills 60,300
T 13 take-ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
(cd /tmp && tar czf $OUT/gemm28.tgz g28out)
echo "== steps"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|relative error .* >" $O/*.log | cut -c1-200 | head -12
echo "== worst rows"; grep -hE "row prefill vs CPU: worst" $O/fast.log | sed 's/^ *//' | cut -c1-120
echo "== bench"; tail -n 4 $O/bench-512.log; tail -n 3 $O/bench-64.log
echo "== speed (chosen)"; grep -hE "\*$" $O/speed.log | sed "s/^ *gemm_fast_speed_cuda_test.go:[0-9]*: //" | cut -c1-120
echo "== take"; grep -hE "^prompt |uncached|from the cache|^first audio|rror" $O/take-ref10.log | head -8
