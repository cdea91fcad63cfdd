#!/bin/bash
# mixers28 run 2 (W2, ≤ 58 s, from the root of a /work/main copy): the tests run 1 ran out of time
# for (the reference prompts against the CPU under both policies and the tower's prompt rows, the
# three at once: they are checks, not timings), then the 30 s voice's first audio, the exact
# prefill, and a prefill's attention with 16 and 32 keys a split against the default 128.
set -u
ROOT=$PWD; X=/tmp/mixers28; O=/tmp/m28out2; mkdir -p $X $O
bash docs/perf/h200-lead6-unpack.sh $ROOT/.carry-mixers28 $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + 56 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?; echo "rc=$rc $n" >> $O/steps.log; return $rc; }
{ date -u; cat $ROOT/.carry-mixers28/REV; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu; C=$X/cuda.test
T 22 tower $C -test.v -test.run 'TestTowerPromptRows' &
T 22 prompt-exact $C -test.v -test.run 'TestFramesBeginPromptMatchesTheCPU' &
T 22 prompt-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestFramesBeginPromptMatchesTheCPU' &
wait
T 12 take-ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
T 8 bench-exact $P bench-backbone -synthetic full -numerics exact -prefills 60,300
T 5 split16 env PROSCENIUM_GPU_ATTN_SPLIT_ROWS=16 $P bench-backbone -synthetic full -numerics fast -prefills 60,300
T 5 split32 env PROSCENIUM_GPU_ATTN_SPLIT_ROWS=32 $P bench-backbone -synthetic full -numerics fast -prefills 60,300
(cd /tmp && tar czf $OUT/mixers28.tgz m28out2)
echo "== steps"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:" $O/tower.log $O/prompt-*.log | head -12
echo "== passes"; grep -hE "^--- PASS|teacher-forced|free-running" $O/tower.log $O/prompt-*.log | sed 's/^ *//' | cut -c1-120 | head -16
echo "-- take-ref30"; grep -hE "^prompt |uncached|from the cache|feedback|^first audio" $O/take-ref30.log | head -6
for f in bench-exact split16 split32; do echo "-- $f"; tail -n 3 $O/$f.log; done
