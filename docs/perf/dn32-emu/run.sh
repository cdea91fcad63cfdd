#!/bin/bash
# dn32's host check of kernels/deltanet.cu's cluster step without a GPU (docs/PERF.md "dn32"):
# the kernels' section (from "The one-row step in one launch" to the end of the file) is compiled by
# g++ against cuda_shim.h: each thread a std::thread, a cluster's 8 blocks at once (1024 threads),
# __syncthreads a block barrier, warp shuffles through per-thread slots, the cluster barrier's arrive
# and wait a std::barrier's, cp.async a plain copy, each block's __shared__ arrays one per cluster
# rank (so a push into rank r's array lands where rank r reads it), __expf and rsqrtf at their error
# bound. emu.cpp runs deltanet_step_cluster_fast and _slots_fast against a float64 one-row step (the
# CPU's deltaNetForward between projections and out_proj) on random states, inputs and weights, four
# steps in a row, and requires ≤ 1e-5 relative for the outputs and states (every value written:
# outputs start as NaN). Usage, from the repository root: bash docs/perf/dn32-emu/run.sh
set -eu
D=$(mktemp -d); trap 'rm -rf $D' EXIT
cp docs/perf/dn32-emu/cuda_shim.h docs/perf/dn32-emu/emu.cpp kernels/deltanet.cuh kernels/common.cuh kernels/numerics.cuh $D/
python3 - kernels/deltanet.cu $D/cluster.cu <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = s[s.index("// The one-row step in one launch"):]
a, b = s.index("// The cluster's primitives"), s.index("// One (head, row) of the step")
s = s[:a] + s[b:]  # the primitives: cuda_shim.h's
s = s.replace("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900", "#if 1")
s = re.sub(r"__shared__\s+([\w:]+)\s+(\w+)((?:\[[^\]]+\])+);",
           lambda m: f"static {m[1]} {m[2]}_all[DNC_CLUSTER]{m[3]}; auto& {m[2]} = {m[2]}_all[emu_rank()];", s)
open(sys.argv[2], "w").write('#include "deltanet.cuh"\n' + s)
PY
g++ -std=c++20 -O1 -ffp-contract=off -pthread -w -o $D/emu $D/emu.cpp
nice -n 19 $D/emu "$@"
