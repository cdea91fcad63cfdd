#!/bin/bash
# Lead, session 10, run 5 (one call, ≤ 120 s) on the final commit (main + gemm31's default choice +
# tower31's t128r4u2 + the main stream's priority on by default; codec31 not merged): the frames,
# codec and tower tests under both policies; five takes and two rounds of B = 1, 4 with the
# defaults and with priority off; the prefill.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run5.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run5; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-120} ))
bash docs/perf/h200-lead6-unpack.sh .carry-fa $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $O/machine.txt 2>&1
C=$X/cuda.test; P=$X/proscenium-gpu
R='^(TestCodecGPUChunkedEqualsWhole|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesPrefixCacheMatchesUncached|TestTowerFrameRows|TestBackboneMatchesCPU)$'
(cd engine/cuda && T 40 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run "$R") &
(cd engine/cuda && T 40 tests-exact $C -test.v -test.run "$R") &
wait
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -numerics fast"
T 28 take-default $P $TK
T 28 take-noprio env PROSCENIUM_GPU_STREAM_PRIORITY=0 $P $TK
T 8 prefill $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
(cd /tmp && tar czf $OUT/run5.tgz --exclude=tokenizer.json run5)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" $O/tests-*.log | sort | uniq -c | head
for f in tests-fast tests-exact; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail; end: $(tail -n 1 $O/$f.log)"; done
for f in take-default take-noprio; do echo "-- $f"; grep -hE "^take|takes after|first audio|batch [14]" $O/$f.log | cut -c1-200; done
grep -E '^(60|300|700) ' $O/prefill.log
