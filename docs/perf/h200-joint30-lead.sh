#!/bin/bash
# joint30 (issue 30: takes that arrive together begin together) for the lead's final run on merged
# main: ≤ 45 s on an H200. From the repository root the binaries were built from:
#   bash docs/perf/h200-joint30-lead.sh BINDIR [OUTDIR]
# BINDIR holds cuda.test (go test -tags cuda -c ./engine/cuda) and proscenium-gpu (the worker).
# Prints: TestTakeFramesBeginTogether under exact and fast (begun together = alone), then
# bench-take's B = 1 and B = 4 rounds begun together (one BeginMany: the joint prefill) and,
# for comparison, B = 4 begun one after another (-begin-each, 100 frames: the first audio and the
# begin do not depend on the frames), each round with its begin's wall time. Limits sum to 42 s.
set -u
ROOT=$PWD; X=$(cd "${1:?BINDIR}" && pwd); L=${2:-/tmp/joint30-lead}; mkdir -p "$L"
[ -f "$X/tokenizer.json" ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > "$L/tokenizer.json"
TOK=$X/tokenizer.json; [ -f "$TOK" ] || TOK=$L/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$TOK PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
t0=$(date +%s)
run() { # name timeout dir cmd...
  local name=$1 to=$2 dir=$3; shift 3
  local s=$(date +%s)
  (cd "$dir" && timeout "$to" "$@") > "$L/$name.log" 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s)-s ))s"
  grep -E -- '^(--- FAIL|FAIL|ok|PASS)|^    --- FAIL|panic|frames the same|fails alone|^prompt |^batches|^batch [0-9]' "$L/$name.log" | grep -v '^=== RUN' | head -12
}
run begin-together-exact 7 engine/cuda "$X/cuda.test" -test.v -test.run 'TestTakeFramesBeginTogether'
PROSCENIUM_TEST_NUMERICS=fast run begin-together-fast 7 engine/cuda "$X/cuda.test" -test.v -test.run 'TestTakeFramesBeginTogether'
run bench-joint 17 . "$X/proscenium-gpu" bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 1,4
run bench-each 11 . "$X/proscenium-gpu" bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -batch 4 -begin-each
echo "total $(( $(date +%s)-t0 ))s; logs in $L"
