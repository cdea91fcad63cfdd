#!/bin/bash
# dnstate34's host check of deltanet_chunk_state_tiled without a GPU (PERF.md "dnstate34"): g++
# compiles kernels/deltanet_chunk.cu against chunk28's shim (docs/perf/chunk28-emu/cuda_shim.h) and
# state_emu.cpp runs the tiled state kernel (cp.async landing late and early) beside the fast one
# against a float64 row recurrence, on TestDeltaNetChunkRule's geometries and 1 … 700 rows. Exits
# non-zero past 1e-5 or on a NaN. Slow (512 threads a block on the host): `nice`. From the root:
#   bash docs/perf/dnstate34-emu/run.sh [quick]
set -eu
D=$(mktemp -d); trap 'rm -rf $D' EXIT
cp docs/perf/chunk28-emu/cuda_shim.h docs/perf/dnstate34-emu/state_emu.cpp kernels/deltanet_chunk.cu kernels/deltanet.cuh \
	kernels/common.cuh kernels/numerics.cuh $D/
g++ -std=c++20 -O1 -ffp-contract=off -pthread -w -o $D/state_emu $D/state_emu.cpp
nice -n 19 $D/state_emu "$@"
