#!/bin/bash
# gpu-perf device run (one call): every cuda device test (kernels, mixers,
# MoE, backbone against the CPU on the golden and make-tiny checkpoints with
# both one-row DeltaNet kernels, tower, sampler), the mixer/GEMM timing,
# bench-backbone (the step variants side by side), bench-tower, and ncu
# profiles of one step and one tower frame. Run from the repository root:
#   .carry-gpu-perf/run.sh OUTDIR   (binaries and tokenizer.json beside it)
out=${1:?usage: run.sh OUTDIR}
c=$(cd "$(dirname "$0")" && pwd)
export PROSCENIUM_GPU_CKPTS=$PWD/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$c/tokenizer.json
log=$out/log
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv; } >"$log" 2>&1
step() { # name timeout command...
	local name=$1 t=$2
	shift 2
	echo "== $name (t+$(($(date +%s) - start)) s)" >>"$log"
	timeout "$t" "$@" >>"$log" 2>&1
	echo "== exit $? ($name)" >>"$log"
}
step backbone 45 "$c/cuda.test" -test.v -test.run 'TestBackbone'
step bench-backbone 60 "$c/proscenium-gpu" bench-backbone -synthetic full -json
step device-tests 40 "$c/cuda.test" -test.v -test.short -test.run 'Test[^BM]'
step bench-tower 20 "$c/proscenium-gpu" bench-tower -synthetic full
step mixer-tests 25 "$c/cuda.test" -test.v -test.run 'TestMixer|TestMoE'
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
left=$((225 - ($(date +%s) - start)))
echo "== ncu: $NCU, $left s left" >>"$log"
if [ -n "$NCU" ] && [ "$left" -gt 40 ]; then
	timeout $((left / 2)) "$NCU" --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \
		"$c/proscenium-gpu" bench-backbone -profile-step >"$out/ncu-step.csv" 2>"$out/ncu.err"
	echo "== exit $? (ncu step)" >>"$log"
	left=$((225 - ($(date +%s) - start)))
	timeout $((left - 5)) "$NCU" --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \
		"$c/proscenium-gpu" bench-tower -synthetic full -profile-frame >"$out/ncu-frame.csv" 2>>"$out/ncu.err"
	echo "== exit $? (ncu frame)" >>"$log"
fi
grep -E '^(--- FAIL|FAIL|ok|PASS|== )|step_device_ms|"prefill|frame \(|greedy|one draw|separate stages|deltanet_step|gemv_prefetch|folded_norms|worst row' "$log" | tail -n 150
