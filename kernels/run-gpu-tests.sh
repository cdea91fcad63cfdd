#!/bin/sh
# Runs the cuda test binaries built by `make cuda-test-bins` on a GPU machine.
# Usage: run-gpu-tests.sh OUTDIR   (run from the folder holding the binaries)
# Writes OUTDIR/gpu-tests.log (everything) and OUTDIR/bandwidth.json.
out=${1:?usage: run-gpu-tests.sh OUTDIR}
dir=$(dirname "$0")
mkdir -p "$out"
log="$out/gpu-tests.log"
status=0
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1
	nvcc --version 2>/dev/null | tail -n 2
	if [ -x "$dir/proscenium-gpu" ]; then
		echo "== worker probe"
		"$dir/proscenium-gpu" -probe || status=1
		if [ -x "$dir/proscenium" ]; then
			echo "== proscenium gpu probe (the CLI starts the worker over the pipe protocol)"
			"$dir/proscenium" gpu probe -worker "$dir/proscenium-gpu" || status=1
		fi
	fi
	echo "== kernels.test"
	"$dir/kernels.test" -test.v || status=1
	echo "== cuda.test (device tests)"
	"$dir/cuda.test" -test.v -test.short -test.run 'Test[^B]' || status=1
	echo "== cuda.test (the backbone against the CPU reference on the golden checkpoints)"
	"$dir/cuda.test" -test.v -test.run 'TestBackbone' || status=1
	echo "== cuda.test (mixer and GEMM timing)"
	"$dir/cuda.test" -test.v -test.run TestMixerTiming || status=1
	echo "== cuda.test (bandwidth)"
	PROSCENIUM_BANDWIDTH_JSON="$out/bandwidth.json" "$dir/cuda.test" -test.v -test.run TestBandwidth || status=1
	echo "== GPU tower benchmark"
	"$dir/proscenium-gpu" bench-tower -synthetic full || status=1
	echo "== exit status $status"
} >"$log" 2>&1
grep -E '^(--- |FAIL|ok|PASS|copy|empty|gemv|timing|[0-9]+ experts|fused|[0-9]+→|== |device:|GPU backend|proscenium|frame|one draw|prefill [0-9]+ text)' "$log" | grep -v -- '--- PASS: Test.*/' | tail -n 120
exit $status
