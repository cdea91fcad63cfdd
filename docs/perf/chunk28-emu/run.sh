#!/bin/bash
# chunk28's host check of kernels/deltanet_chunk.cu without a GPU (PERF.md "chunk28 (unmeasured)";
# docs/MODEL.md "Numerics policy"): g++ compiles the kernel file against cuda_shim.h (each block's
# threads std::threads, __syncthreads a barrier, warp shuffles through per-thread slots, __expf and
# rsqrtf at their hardware error bound) and chunk_emu.cpp runs both policies' instances against a
# float64 gated delta rule (the row recurrence) on TestDeltaNetChunkRule's row counts: the rule's
# three kernels, and the whole mixer (prep … norm). Exits non-zero past 1e-5 or on a NaN.
# Slow and thread-hungry (512 threads a block): `nice`. Usage, from the repository root:
#   bash docs/perf/chunk28-emu/run.sh [quick|tail]
set -eu
D=$(mktemp -d); trap 'rm -rf $D' EXIT
cp docs/perf/chunk28-emu/cuda_shim.h docs/perf/chunk28-emu/chunk_emu.cpp kernels/deltanet_chunk.cu kernels/deltanet.cuh \
	kernels/common.cuh kernels/numerics.cuh $D/
g++ -std=c++20 -O1 -ffp-contract=off -pthread -w -o $D/chunk_emu $D/chunk_emu.cpp
nice -n 19 $D/chunk_emu "$@"
