#!/bin/bash
# joint30 W2 (issue 30: the joint prefill of takes that arrive together). From the root of a copy of
# /work/main with .carry-joint30 carried: bash .carry-joint30/run.sh. Logs: $OUT/joint30.tgz.
# "combo" binaries = joint30 + mixers28 (512-row passes by default); plain = joint30 (REV).
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
B="bench-take -synthetic full -prompt 60 -frames 300 -takes 1"
T 25 combo-bench-joint $X/combo-proscenium-gpu $B -batch 1,2,4,8
T 14 combo-bench-each $X/combo-proscenium-gpu $B -batch 4 -begin-each
T 14 combo-bench-joint-grouped $X/combo-proscenium-gpu $B -batch 4 -prefill-experts grouped
T 14 combo-bench-joint-profile $X/combo-proscenium-gpu $B -batch 4 -prompt-profile
PROSCENIUM_GPU_PREFILL_ROWS=512 T 14 bench-joint-profile $X/proscenium-gpu $B -batch 4 -prompt-profile
cd $ROOT/engine/cuda
T 15 combo-tests-exact $X/combo-cuda.test -test.v -test.run 'TestTakeFramesBeginTogether|TestTakeFramesMatchAlone'
PROSCENIUM_TEST_NUMERICS=fast T 12 combo-tests-fast $X/combo-cuda.test -test.v -test.run 'TestTakeFramesBeginTogether|TestTakeFramesMatchAlone'
cd $ROOT/cmd/proscenium-gpu
T 12 combo-tests-engine-batched $X/combo-proscenium-gpu.test -test.v -test.run 'TestCUDAEngineBatchedTakes'
cd $ROOT
(cd /tmp && tar czf $OUT/joint30.tgz joint30-out)
echo "== steps ($(( $(date +%s)-T0 ))s)"; cat $O/steps.log
echo "== tests"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|panic:|frames the same|^--- PASS" $O/*tests-*.log | head -30
for f in combo-bench-joint combo-bench-each combo-bench-joint-grouped combo-bench-joint-profile bench-joint-profile; do echo "-- $f"; grep -hE "^prompt|^first audio|^batch [0-9]|Error|error|panic" $O/$f.log | head -8; done
