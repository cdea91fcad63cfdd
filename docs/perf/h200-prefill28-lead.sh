#!/bin/bash
# Issue 28's prefill checks and figures on merged binaries (≤ 120 s on an H200).
# Usage, from the checkout's root: bash docs/perf/h200-prefill28-lead.sh BINDIR
# where BINDIR holds cuda.test (go test -tags cuda -c ./engine/cuda) and
# proscenium-gpu (go build -tags cuda ./cmd/proscenium-gpu), kernels built for sm_90.
# Writes logs under /tmp/p28lead (and $OUT/p28lead.tgz when $OUT is set).
set -u
ROOT=$PWD; B=${1:?binary directory}; O=/tmp/p28lead; mkdir -p $O
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + 115 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?; echo "rc=$rc $n" >> $O/steps.log; return $rc; }
T 25 kernels $B/cuda.test -test.v -test.run 'TestGemmBF16|TestGemmFP8|TestGemmGrouped|TestMoERowsGEMV|TestTowerPromptRows'
T 30 exact $B/cuda.test -test.v -test.run 'TestBackboneMatchesCPU|TestFramesBeginPromptMatchesTheCPU|TestFramesPrefixCacheMatchesUncached'
T 28 fast env PROSCENIUM_TEST_NUMERICS=fast $B/cuda.test -test.v -test.run 'TestBackboneMatchesCPU|TestFramesBeginPromptMatchesTheCPU'
T 12 prefills $B/proscenium-gpu bench-backbone -synthetic full -numerics fast -prefills 60,300
T 14 take-noref $B/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 100 -takes 2
T 14 take-ref10 $B/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 14 take-ref30 $B/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
[ -n "${OUT:-}" ] && (cd /tmp && tar czf $OUT/p28lead.tgz p28lead)
echo "== steps"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:" $O/*.log | head -20
echo "-- prefill (fast)"; tail -n 4 $O/prefills.log
for f in take-noref take-ref10 take-ref30; do echo "-- $f"; grep -hE "^prompt |uncached|from the cache|feedback|^first audio" $O/$f.log | head -6; done
