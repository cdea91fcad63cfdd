#!/bin/bash
# Builds flash28's device binaries (sm_90 kernels) from this checkout into BINDIR:
#   bash docs/perf/h200-flash28-build.sh BINDIR
# cuda.test (engine/cuda's device tests) and proscenium-gpu (bench-backbone), as
# docs/perf/h200-lead6-build.sh builds them; docs/perf/h200-flash28.sh BINDIR OUTDIR runs them.
set -eu
cd "$(dirname "$0")/../.."
export GOTOOLCHAIN=go1.27.3
B=$1; mkdir -p $B
nice -n 10 make kernels KERNEL_GENCODE='-gencode=arch=compute_90,code=sm_90' > $B/kernels.log 2>&1
nice -n 10 go test -tags cuda -c -ldflags "-s -w" -o $B/cuda.test ./engine/cuda
nice -n 10 go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu
git rev-parse --short HEAD > $B/REV
ls -la $B
