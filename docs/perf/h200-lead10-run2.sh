#!/bin/bash
# Lead, session 10, run 2 (one call, ≤ 200 s): the take loop collecting a codec chunk when it is
# done (DecodeReadier), checked by the frame, codec and engine tests; then how the host waits
# (PROSCENIUM_GPU_SYNC blocking / spin / yield) and the main stream's priority, each on five
# takes and two rounds of B = 1 and 4 (run 1's single takes spread 0.0730–0.0779 on one code);
# the tower frame under ncu.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run2.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run2; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-200} ))
bash docs/perf/h200-lead6-unpack.sh .carry-fa $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $O/machine.txt 2>&1
C=$X/cuda.test; P=$X/proscenium-gpu
R='^(TestFramesPrefixCacheMatchesUncached|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesBeginPromptMatchesTheCPU|TestCodecGPUChunkedEqualsWhole|TestCodecGPUMatchesReference)$'
(cd engine/cuda && T 45 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run "$R") &
(cd engine/cuda && T 45 tests-exact $C -test.v -test.run "$R") &
(cd cmd/proscenium-gpu && T 45 engine-tests $X/proscenium-gpu.test -test.v -test.run '^(TestCUDAEngineTakes|TestCUDAEngineBatchedTakes)$') &
wait
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -numerics fast"
T 30 take-blocking $P $TK
T 30 take-spin env PROSCENIUM_GPU_SYNC=spin $P $TK
T 30 take-yield env PROSCENIUM_GPU_SYNC=yield $P $TK
T 30 take-prio env PROSCENIUM_GPU_STREAM_PRIORITY=1 $P $TK
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
T 30 ncu-tower $NCU --clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv --graph-profiling node $P bench-tower -synthetic full -profile-frame
(cd /tmp && tar czf $OUT/run2.tgz run2)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|^        --- FAIL|panic:" $O/tests-*.log $O/engine-tests.log | sort | uniq -c | head -20
for f in tests-fast tests-exact engine-tests; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail; end: $(tail -n 1 $O/$f.log)"; done
for f in take-blocking take-spin take-yield take-prio; do echo "-- $f"; grep -hE "^take|takes after|codec  |frame  |batch [14]" $O/$f.log | cut -c1-230; done
echo "-- ncu-tower"; python3 docs/perf/ncu-agg.py $O/ncu-tower.log 2>&1 | head -24
