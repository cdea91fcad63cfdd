#!/bin/bash
# dnc13's host check of deltanet_chunk_intra_tiled without a GPU (PERF.md "dnc13"): g++ compiles
# kernels/deltanet_chunk.cu against chunk28's shim (docs/perf/chunk28-emu/cuda_shim.h) and
# intra_emu.cpp runs the tiled intra kernel beside deltanet_chunk_intra_fast (cum, qm, am compared,
# NaN-poisoned outputs), then the fast solve and the tiled state after each against a float64 row
# recurrence, on TestDeltaNetChunkRule's geometries and 1 … 700 rows. Exits non-zero past the
# bounds or on a NaN. `nice`. From the root:
#   bash docs/perf/dnc13-emu/run.sh [quick]
set -eu
D=$(mktemp -d); trap 'rm -rf $D' EXIT
cp docs/perf/chunk28-emu/cuda_shim.h docs/perf/dnc13-emu/intra_emu.cpp kernels/deltanet_chunk.cu kernels/deltanet.cuh \
	kernels/common.cuh kernels/numerics.cuh $D/
g++ -std=c++20 -O1 -ffp-contract=off -pthread -w -o $D/intra_emu $D/intra_emu.cpp
nice -n 19 $D/intra_emu "$@"
