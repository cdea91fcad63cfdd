#!/bin/bash
# prefill28 run 3 (≤ 120 s): defaults = 64-row passes, per-pair experts, BF16
# tensor-core GEMMs for the fast dense projections, the tower's batched prompt
# rows (text rows fixed). Tests against the CPU under both policies, figures,
# then a diagnosis of 256-row passes (MoE alone; mixers unblocked).
set -u
ROOT=$PWD; X=/tmp/prefill28; O=/tmp/p28out; mkdir -p $X $O
tar xJf $ROOT/.carry-prefill28/bundle.tar.xz -C $X
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + 112 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?; echo "rc=$rc $n" >> $O/steps.log; return $rc; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu; C=$X/cuda.test
T 20 kernels $C -test.v -test.short -test.run 'TestGemmBF16|TestGemmFP8|TestGemmGrouped|TestMoERowsGEMV|TestTowerPromptRows'
T 28 exact $C -test.v -test.run 'TestBackboneMatchesCPU|TestFramesBeginPromptMatchesTheCPU|TestFramesPrefixCacheMatchesUncached'
T 26 fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestBackboneMatchesCPU|TestFramesBeginPromptMatchesTheCPU'
T 11 take-noref $P bench-take -synthetic full -prompt 60 -frames 100 -takes 2
T 12 take-ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 13 take-ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
T 8 bench-fast $P bench-backbone -synthetic full -numerics fast -prefills 60,300
T 5 diag-moe256 env PROSCENIUM_GPU_PREFILL_ROWS=256 $C -test.v -test.run 'TestBackboneMoE/like'
T 5 diag-nomixblocks env PROSCENIUM_GPU_PREFILL_ROWS=256 PROSCENIUM_GPU_MIXER_ROWS=256 $C -test.v -test.run 'TestBackboneMatchesCPU/like'
(cd /tmp && tar czf $OUT/prefill28.tgz p28out)
echo "== steps"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:" $O/kernels.log $O/exact.log $O/fast.log | head -16
for f in take-noref take-ref10 take-ref30; do echo "-- $f"; grep -hE "^prompt |uncached|from the cache|feedback|^first audio" $O/$f.log | head -6; done
echo "-- bench"; tail -n 4 $O/bench-fast.log
echo "-- diag"; grep -hE "256 rows|prefill vs CPU: worst" $O/diag-*.log | cut -c1-150 | head -6
