#!/bin/bash
# Issue 28's prefill checks and figures on merged binaries, ≤ 60 s on an H200.
# Usage, from the checkout's root: bash docs/perf/h200-prefill28-lead.sh BINDIR OUTDIR
# BINDIR holds cuda.test (go test -tags cuda -c ./engine/cuda) and proscenium-gpu
# (go build -tags cuda ./cmd/proscenium-gpu), kernels built for sm_90. Logs go to
# OUTDIR/p28lead/; the summary (the figures docs/PERF.md "Prefill on tensor cores"
# quotes) to stdout.
set -u
ROOT=$PWD; B=${1:?binary directory}; O=${2:?output directory}/p28lead; mkdir -p $O
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + 58 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?; echo "rc=$rc $n" >> $O/steps.log; return $rc; }
# The batched tower rows against the CPU and the one-row path; the tensor-core GEMMs.
T 10 kernels $B/cuda.test -test.v -test.run 'TestTowerPromptRows|TestGemmGrouped'
# Reference prompts against the CPU (exact: the CPU's bits; fast: 1e-4).
T 14 prompt-exact $B/cuda.test -test.v -test.run 'TestFramesBeginPromptMatchesTheCPU|TestFramesPrefixCacheMatchesUncached'
T 12 prompt-fast env PROSCENIUM_TEST_NUMERICS=fast $B/cuda.test -test.v -test.run 'TestFramesBeginPromptMatchesTheCPU'
T 10 take-ref10 $B/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10
T 11 take-ref30 $B/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30
# Diagnosis of the opt-in 256-row passes (their blocks' positions now host-written).
T 5 diag-256 env PROSCENIUM_GPU_PREFILL_ROWS=256 $B/cuda.test -test.v -test.run 'TestBackboneMatchesCPU/like'
echo "== steps"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:" $O/kernels.log $O/prompt-*.log | head -12
for f in take-ref10 take-ref30; do echo "-- $f"; grep -hE "^prompt |uncached|from the cache|^first audio" $O/$f.log | head -4; done
echo "-- 256-row passes (diagnosis)"; grep -hE "prefill vs CPU: worst" $O/diag-256.log | cut -c1-120
