#!/bin/bash
# Builds chunk28's device binaries (sm_90 kernels) from this checkout into BINDIR, the steps of
# docs/perf/h200-lead6-build.sh: make kernels for sm_90, engine/cuda's device tests (cuda.test)
# and the worker (proscenium-gpu, for bench-backbone). Then from the same checkout on the H200:
#   bash docs/perf/h200-chunk28.sh BINDIR OUTDIR
# Usage: bash docs/perf/h200-chunk28-build.sh BINDIR
set -eu
cd "$(dirname "$0")/../.."
export GOTOOLCHAIN=go1.27.3
B=$1; mkdir -p $B
nice -n 10 make kernels KERNEL_GENCODE='-gencode=arch=compute_90,code=sm_90' > $B/kernels.log 2>&1
nice -n 10 go test -tags cuda -c -ldflags "-s -w" -o $B/cuda.test ./engine/cuda
nice -n 10 go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu
git rev-parse --short HEAD > $B/REV
ls -la $B
