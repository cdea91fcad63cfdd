#!/bin/bash
# attn32's host check of kernels/attention_decode.cu without a GPU (docs/PERF.md "attn32"): g++
# compiles the kernel against cuda_shim.h (flash28's, docs/perf/flash28-emu, plus __syncwarp and
# atomicExch) and decode_emu.cpp compares attn_decode_fast with a float64 attention: outputs, the
# appended key and value, the counters left zero. Slow (256 threads a block as std::threads): a few
# cases, `nice`; `big` adds the full geometry at 1000 and 1099 cached rows. Usage, from the
# repository root: bash docs/perf/attn32-emu/run.sh [big]
set -eu
D=$(mktemp -d); trap 'rm -rf $D' EXIT
cp docs/perf/attn32-emu/cuda_shim.h docs/perf/attn32-emu/decode_emu.cpp kernels/attention_decode.cu kernels/common.cuh kernels/numerics.cuh kernels/fused.cuh $D/
g++ -std=c++20 -O1 -pthread -w -o $D/decode_emu $D/decode_emu.cpp
nice -n 19 $D/decode_emu "$@"
