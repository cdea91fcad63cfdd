#!/bin/bash
# attn27's host check of kernels/attention.cu's tower_attend_rope{,_takes}_h128 without a GPU (docs/PERF.md
# "ehtab27", its attn27 paragraph): g++ compiles attention.cu against attn32's cuda_shim.h and tower_attn_emu.cpp
# holds the new instances and the old (every split) to a float64 attention. Slow (256 threads a block as
# std::threads): `nice`; `big` adds caches of 1023–2000 rows. Usage, from the repository root:
# bash docs/perf/attn27-emu/run.sh [big]
set -eu
D=$(mktemp -d); trap 'rm -rf $D' EXIT
cp docs/perf/attn32-emu/cuda_shim.h docs/perf/attn27-emu/tower_attn_emu.cpp kernels/attention.cu kernels/common.cuh kernels/numerics.cuh kernels/fused.cuh kernels/frame_control.cuh $D/
g++ -std=c++20 -O1 -pthread -w -o $D/emu $D/tower_attn_emu.cpp
nice -n 19 $D/emu "$@"
