#!/bin/bash
# Issue 28's longer prefill passes on merged binaries, ≤ 45 s on an H200 (mixers28).
# Usage, from the checkout's root: bash docs/perf/h200-mixers28-lead.sh BINDIR OUTDIR
# BINDIR holds cuda.test (go test -tags cuda -c ./engine/cuda) and proscenium-gpu (go build -tags
# cuda ./cmd/proscenium-gpu), kernels built for sm_90. Logs go to OUTDIR/m28lead/; the summary to
# stdout. The checks run seven at once (they are not timings), then the figures one at a time.
set -u
ROOT=$PWD; B=${1:?binary directory}; O=${2:?output directory}/m28lead; mkdir -p $O
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + 44 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?; echo "rc=$rc $n" >> $O/steps.log; return $rc; }
C=$B/cuda.test; F=PROSCENIUM_TEST_NUMERICS=fast
T 22 backbone-exact $C -test.v -test.run 'TestBackboneMatchesCPU' &
T 22 backbone-fast env $F $C -test.v -test.run 'TestBackboneMatchesCPU' &
T 22 passes-exact $C -test.v -test.run 'TestBackbonePrefillPassesMatchCPU' &
T 22 passes-fast env $F $C -test.v -test.run 'TestBackbonePrefillPassesMatchCPU' &
T 22 prompt-exact $C -test.v -test.run 'TestFramesBeginPromptMatchesTheCPU' &
T 22 prompt-fast env $F $C -test.v -test.run 'TestFramesBeginPromptMatchesTheCPU' &
T 22 prompt-kernels $C -test.v -test.run 'TestFramesPrefixCacheMatchesUncached|TestTowerPromptRows|TestAttentionCoreBlocks' &
wait
T 7 bench $B/proscenium-gpu bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 15 take-ref30 $B/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
echo "== steps"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:" $O/backbone-*.log $O/passes-*.log $O/prompt-*.log | head -12
echo "== worst rows"; grep -hE "prefill in passes of [0-9]+ vs CPU: worst|300-row prefill vs CPU: worst|teacher-forced" $O/backbone-*.log $O/passes-*.log $O/prompt-*.log | sed 's/^ *//' | cut -c1-110 | head -20
echo "-- take-ref30"; grep -hE "uncached|from the cache|feedback" $O/take-ref30.log | head -4
echo "-- bench"; tail -n 4 $O/bench.log
