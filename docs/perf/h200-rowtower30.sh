#!/bin/bash
# Several takes at once on the GPU (issues 27/30, rowtower30): correctness of the B-row tower
# and of cuda.TakeFrames against each take alone, the worker's engine at batch 4, and the
# figures docs/PERF.md "Several takes in one step" quotes. ≤ 120 s on an H200.
# Usage, from the repository root of the tree the binaries were built from:
#   bash docs/perf/h200-rowtower30.sh BINDIR [OUTDIR]
# BINDIR holds cuda.test (go test -tags cuda -c ./engine/cuda), proscenium-gpu.test
# (go test -tags cuda -c ./cmd/proscenium-gpu) and proscenium-gpu (the worker).
set -u
ROOT=$PWD; X=$(cd "${1:?BINDIR}" && pwd); L=${2:-/tmp/rowtower30-logs}; mkdir -p "$L"
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
t0=$(date +%s)
run() { # name timeout dir cmd...
  local name=$1 to=$2 dir=$3; shift 3
  local s=$(date +%s)
  (cd "$dir" && timeout "$to" "$@") > "$L/$name.log" 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s)-s ))s"
  grep -E -- '^(--- FAIL|FAIL|ok|PASS)|^    --- FAIL|panic|frames the same|^takes [0-9]|^batch|first audio|real-time|take [0-9]:' "$L/$name.log" | grep -v '^=== RUN' | head -24
}
run rows-tests 25 engine/cuda "$X/cuda.test" -test.v -test.run 'TestGemvRows$|TestTowerFrameRows'
run takes 20 engine/cuda "$X/cuda.test" -test.v -test.run 'TestTakeFramesMatchAlone|TestBackboneStepRowsMatchTakesAlone'
run engine-batched 30 cmd/proscenium-gpu "$X/proscenium-gpu.test" -test.v -test.run 'TestCUDAEngineBatchedTakes'
run bench-rows 15 . "$X/proscenium-gpu" bench-tower -synthetic full -rows 1,2,4,8 -frames 200
tail -5 "$L/bench-rows.log"
run bench-take 40 . "$X/proscenium-gpu" bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 1,2,4,8
tail -12 "$L/bench-take.log"
echo "total $(( $(date +%s)-t0 ))s; logs in $L"
