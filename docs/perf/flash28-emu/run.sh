#!/bin/bash
# flash28's host check of kernels/attention_prompt.cu without a GPU (PERF.md "flash28 (unmeasured)"):
# g++ compiles the kernel file against cuda_shim.h (each block's threads std::threads, __syncthreads
# a barrier, warp shuffles through a per-warp buffer between barriers) and flash_emu.cpp compares
# attn_flash_fast (+ attn_flash_combine_fast) with a float64 attention on random queries, cache and
# gates. Slow and thread-hungry (128 threads a block): a few cases, `nice`. Usage, from the
# repository root: bash docs/perf/flash28-emu/run.sh [big]
set -eu
D=$(mktemp -d); trap 'rm -rf $D' EXIT
cp docs/perf/flash28-emu/cuda_shim.h docs/perf/flash28-emu/flash_emu.cpp kernels/attention_prompt.cu kernels/common.cuh kernels/numerics.cuh $D/
g++ -std=c++20 -O1 -pthread -w -o $D/flash_emu $D/flash_emu.cpp
nice -n 19 $D/flash_emu "$@"  # [big] [v2]: v2 runs attn13's attn_flash2_fast
