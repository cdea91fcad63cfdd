#!/bin/bash
# Lead, session 11, run 1b (one call, ≤ 200 s) on branch ahead32 (main + two frames / steps in
# flight under PROSCENIUM_GPU_FRAMES_AHEAD=2): its correctness (one take, a take set, both
# policies) and its A/B on takes of one and four (seeds from 3: every take of a round runs 300
# frames). Carried: .carry-fa. Logs: $OUT/run1b.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run1b; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-200} ))
bash docs/perf/h200-lead6-unpack.sh .carry-fa $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu
R='^(TestFramesTwoAhead|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestTakeFramesPCMMatchesAlone|TestFramesPrefixCacheMatchesUncached)$'
cd engine/cuda
T 70 ahead-exact env PROSCENIUM_GPU_FRAMES_AHEAD=2 $X/cuda.test -test.v -test.run "$R" &
T 70 ahead-fast env PROSCENIUM_GPU_FRAMES_AHEAD=2 PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$R" &
T 70 one-exact $X/cuda.test -test.v -test.run "$R" &
wait
cd $ROOT
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 4 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast"
T 34 take-1 $P $TK
T 34 take-2 env PROSCENIUM_GPU_FRAMES_AHEAD=2 $P $TK
T 34 take-2b env PROSCENIUM_GPU_FRAMES_AHEAD=2 $P $TK
(cd /tmp && tar czf $OUT/run1b.tgz --exclude=tokenizer.json run1b)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" $O/*.log | sort | uniq -c | head -20
for f in ahead-exact ahead-fast one-exact; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail; end: $(tail -n 1 $O/$f.log)"; done
grep -h "TestFramesTwoAhead/.*:" $O/ahead-exact.log | head -4
for f in take-1 take-2 take-2b; do echo "-- $f"; grep -hE "^device|takes after|takes' codes|first audio  |batch [14]|  frame  " $O/$f.log | cut -c1-250; done
