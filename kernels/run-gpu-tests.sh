#!/bin/sh
# Runs the cuda test binaries built by `make cuda-test-bins` on a GPU machine.
# Usage: run-gpu-tests.sh OUTDIR   (run from the folder holding the binaries)
# Writes OUTDIR/gpu-tests.log (everything) and OUTDIR/bandwidth.json.
out=${1:?usage: run-gpu-tests.sh OUTDIR}
dir=$(dirname "$0")
mkdir -p "$out"
# The GPU codec tests read the codec goldens (copied by make cuda-test-bins).
export PROSCENIUM_CODEC_TESTDATA="$(cd "$dir" && pwd)/codec"
# The take comparisons (reference-voice prompts, tiny backbones) write make-tiny
# checkpoints from the base tokenizer make cuda-test-bins copies.
tok=${PROSCENIUM_BASE_TOKENIZER:-$dir/tokenizer.json}
[ -f "$tok" ] && export PROSCENIUM_TINY_TOKENIZER="$(cd "$(dirname "$tok")" && pwd)/$(basename "$tok")"
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
	echo "== cuda.test (the backbone against the CPU reference on the golden checkpoints: exact numerics, the CPU's bits)"
	"$dir/cuda.test" -test.v -test.run 'TestBackbone' || status=1
	echo "== cuda.test (the same and the tower under fast numerics: within tolerance)"
	PROSCENIUM_TEST_NUMERICS=fast "$dir/cuda.test" -test.v -test.run 'TestBackbone|TestTowerFrames' || status=1
	echo "== cuda.test (mixer and GEMM timing)"
	"$dir/cuda.test" -test.v -test.run TestMixerTiming || status=1
	echo "== cuda.test (bandwidth)"
	PROSCENIUM_BANDWIDTH_JSON="$out/bandwidth.json" "$dir/cuda.test" -test.v -test.run TestBandwidth || status=1
	echo "== GPU tower benchmark"
	"$dir/proscenium-gpu" bench-tower -synthetic full || status=1
	echo "== GPU codec benchmark"
	"$dir/proscenium-gpu" bench-codec --synthetic s2 --stages || status=1
	echo "== GPU take benchmark (whole takes through the take loop, synthetic full geometry, 60-token prompt)"
	"$dir/proscenium-gpu" bench-take -synthetic full -prompt 60 -frames 300 -takes 3 || status=1
	"$dir/proscenium-gpu" bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -pipeline=false || status=1
	echo "== GPU take benchmark in a reference voice (10 s and 30 s of synthetic frames): uncached, then from the voice cache"
	"$dir/proscenium-gpu" bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 || status=1
	"$dir/proscenium-gpu" bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 || status=1
	# The memory tier (issue 29): caps that mimic 32 and 24 GB cards put the
	# experts of the last layers in pinned host memory (synthetic routing is
	# near uniform: the worst case for any expert cache).
	for cap in 32212254720 23622320128; do
		echo "== GPU take benchmark under a device cap of $cap bytes (30 GiB, 22 GiB): experts in host memory"
		"$dir/proscenium-gpu" bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -cap $cap || status=1
		"$dir/proscenium-gpu" bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -cap $cap -json >"$out/bench-take-cap-$cap.json" || status=1
	done
	if [ -f "$tok" ]; then
		for g in demo odd; do
			echo "== GPU take against the CPU ($g checkpoint): teacher-forced logits, free-running codes"
			"$dir/proscenium-gpu" make-tiny -tokenizer "$tok" -geometry $g "$out/ck-$g" &&
				"$dir/proscenium-gpu" debug-take -model "$out/ck-$g" -out "$out/take-$g.json" &&
				"$dir/proscenium-gpu" debug-take -model "$out/ck-$g" -numerics exact -baseline 0 -out "$out/take-$g-exact.json" || status=1
		done
		echo "== GPU take refused by a memory cap (50 MB)"
		"$dir/proscenium-gpu" bench-take -model "$out/ck-demo" -cap 50000000 && status=1
	else
		echo "== GPU take against the CPU: skipped (no base tokenizer.json at $tok)"
	fi
	echo "== exit status $status"
} >"$log" 2>&1
grep -E '^(--- |FAIL|ok|PASS|copy|empty|gemv|timing|[0-9]+ experts|fused|[0-9]+→|== |device:|GPU backend|proscenium|frame|one draw|prefill [0-9]+ text|GPU codec|GPU take|take |first audio|reference voice|  uncached|  from the cache|  voice cache|  (codec|frame|backbone step)|memory|experts|  device hit|  bus|proscenium-gpu|  (streaming|first frame|whole decode)|    codec_.*(relative|bit for bit))' "$log" | grep -v -- '--- PASS: Test.*/' | tail -n 120
exit $status
