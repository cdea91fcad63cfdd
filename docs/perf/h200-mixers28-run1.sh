#!/bin/bash
# mixers28 run 1 (≤ 118 s, from the root of a /work/main copy): 512-row prefill passes by default
# (DeltaNet and projections over the whole pass, attention cores in 64-row blocks at host-written
# positions), the tower's prompt rows 256 at a time. Tests against the CPU under both policies,
# then bench-backbone (512 vs 256-row passes), bench-take's first audio, 256-row passes against the CPU.
set -u
ROOT=$PWD; X=/tmp/mixers28; O=/tmp/m28out; mkdir -p $X $O
bash docs/perf/h200-lead6-unpack.sh $ROOT/.carry-mixers28 $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + 116 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?; echo "rc=$rc $n" >> $O/steps.log; return $rc; }
{ date -u; cat $ROOT/.carry-mixers28/REV; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu; C=$X/cuda.test
TESTS='TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesBeginPromptMatchesTheCPU|TestFramesPrefixCacheMatchesUncached'
T 16 kernels $C -test.v -test.run 'TestDeltaNetChunkRule|TestDeltaNetChunkedLayer|TestDeltaNetPromptPassBits|TestAttentionCoreBlocks|TestAttentionCoreBits|TestAttentionLayer|TestTowerPromptRows'
T 32 exact $C -test.v -test.run "$TESTS"
T 29 fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run "${TESTS%|*}"
T 7 bench-512 $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 11 take-ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 10 take-noref $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2
T 7 bench-256 env PROSCENIUM_GPU_PREFILL_ROWS=256 $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 6 pass256-exact env PROSCENIUM_GPU_PREFILL_ROWS=256 $C -test.v -test.run TestBackbonePrefillPassesMatchCPU
T 6 pass256-fast env PROSCENIUM_GPU_PREFILL_ROWS=256 PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run TestBackbonePrefillPassesMatchCPU
(cd /tmp && tar czf $OUT/mixers28.tgz m28out)
echo "== steps"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:" $O/kernels.log $O/exact.log $O/fast.log $O/pass256-*.log | head -16
echo "== worst rows"; grep -hE "prefill in passes|row prefill vs CPU: worst" $O/exact.log $O/fast.log $O/pass256-*.log | sed 's/^ *//' | cut -c1-150 | head -20
for f in take-noref take-ref10; do echo "-- $f"; grep -hE "^prompt |uncached|from the cache|feedback|^first audio|^take " $O/$f.log | head -8; done
for f in bench-256 bench-512; do echo "-- $f"; tail -n 4 $O/$f.log; done
