#!/bin/bash
# As carried for the W1 window of session 7 (.carry-joint30/run.sh); the bundle is docs/perf/h200-joint30-build.sh's.
# joint30 (issue 30: the joint prefill of takes that arrive together), device run. From the root of
# a copy of /work/main with .carry-joint30 carried: bash .carry-joint30/run.sh. Logs: $OUT/joint30.tgz.
set -u
ROOT=$PWD; X=/tmp/joint30; O=/tmp/joint30-out; rm -rf $X $O; mkdir -p $X $O
T0=$(date +%s); END=$(( T0 + ${BUDGET_S:-110} ))
bash docs/perf/h200-lead6-unpack.sh .carry-joint30 $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; cat .carry-joint30/REV; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
cd $ROOT/engine/cuda
T 30 tests-exact $X/cuda.test -test.v -test.run 'TestTakeFramesBeginTogether|TestTakeFramesMatchAlone|TestFramesBeginPromptMatchesTheCPU|TestFramesPrefixCacheMatchesUncached'
PROSCENIUM_TEST_NUMERICS=fast T 20 tests-fast $X/cuda.test -test.v -test.run 'TestTakeFramesBeginTogether|TestTakeFramesMatchAlone'
T 15 tests-broken $X/cuda-broken.test -test.v -test.run 'TestTakeFramesBeginTogether'
cd $ROOT/cmd/proscenium-gpu
PROSCENIUM_GPU_PREFILL_ROWS=256 T 15 tests-engine-batched $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngineBatchedTakes'
cd $ROOT
PROSCENIUM_GPU_PREFILL_ROWS=512 T 30 bench-joint $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 1,2,4,8
PROSCENIUM_GPU_PREFILL_ROWS=512 T 20 bench-joint-grouped $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 1,4,8 -prefill-experts grouped
PROSCENIUM_GPU_PREFILL_ROWS=512 T 14 bench-each-grouped $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 4 -prefill-experts grouped -begin-each
PROSCENIUM_GPU_PREFILL_ROWS=512 T 14 bench-each $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 4 -begin-each
(cd /tmp && tar czf $OUT/joint30.tgz joint30-out)
echo "== steps ($(( $(date +%s)-T0 ))s)"; cat $O/steps.log
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|panic:|frames the same|fails alone" $O/tests-*.log | head -30
echo "== passes"; for f in $O/tests-*.log; do echo "$(basename $f): $(grep -c -- '--- PASS' $f) pass, $(grep -c -- '--- FAIL' $f) fail"; done
for f in bench-joint bench-joint-grouped bench-each-grouped bench-each; do echo "-- $f"; grep -hE "^prompt|^take |^first audio|^batches|^batch [0-9]|Error|error|panic" $O/$f.log | head -10; done
