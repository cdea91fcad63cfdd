#!/bin/bash
# The GPU take's end-to-end checks on a GPU machine (docs/PERF.md, "GPU take"):
# the take engine through the worker from the CLI (same seed same bytes, the
# CPU's codes, auto), a missing worker, a memory cap, kill -9 of the worker
# mid-take. Run from the folder `make cuda-test-bins` fills (proscenium,
# proscenium-gpu, tokenizer.json; lib/ with the CLI's audio libraries when
# the machine lacks them). Usage: run-take-checks.sh OUTDIR
out=${1:?usage: run-take-checks.sh OUTDIR}
dir=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export PROSCENIUM_GPU_WORKER=$dir/proscenium-gpu
[ -d "$dir/lib" ] && export LD_LIBRARY_PATH=$dir/lib
P=$dir/proscenium
L=$out/take-checks.log
s() { echo "== $(date -u +%T) $*" >>"$L"; }
T="Hello there, this is a take made on the GPU."
ck=$out/ck-demo
s make-tiny; "$dir/proscenium-gpu" make-tiny -tokenizer "$dir/tokenizer.json" "$ck" >>"$L" 2>&1
s probe; "$P" gpu probe >>"$L" 2>&1
s synth cuda twice, same seed
for i in 1 2; do
	timeout 60 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 200 --backend cuda --out "$out/cuda$i.wav" --codes "$out/cuda$i.npy" >>"$L" 2>&1; echo "rc=$?" >>"$L"
done
cmp "$out/cuda1.wav" "$out/cuda2.wav" >>"$L" 2>&1 && echo "same seed: identical WAV" >>"$L"
s synth cpu, same seed
timeout 120 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 200 --backend cpu --out "$out/cpu.wav" --codes "$out/cpu.npy" >>"$L" 2>&1; echo "rc=$?" >>"$L"
cmp "$out/cuda1.npy" "$out/cpu.npy" >>"$L" 2>&1 && echo "cuda codes == cpu codes" >>"$L"
s synth auto; timeout 60 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 50 --out "$out/auto.wav" >>"$L" 2>&1; echo "rc=$?" >>"$L"
s missing worker, auto then cuda
PROSCENIUM_GPU_WORKER=/nonexistent timeout 120 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 20 --out "$out/miss.wav" >>"$L" 2>&1; echo "rc=$?" >>"$L"
PROSCENIUM_GPU_WORKER=/nonexistent timeout 30 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 20 --backend cuda --out "$out/miss2.wav" >>"$L" 2>&1; echo "rc=$? (want 1)" >>"$L"
s memory cap 50 MB; timeout 30 "$dir/proscenium-gpu" bench-take -model "$ck" -cap 50000000 >>"$L" 2>&1; echo "rc=$? (want 1)" >>"$L"
s kill -9 of the worker mid-take
# The demo take is short (well under a second on a GPU): kill at several
# delays after the worker appears until one lands inside the take.
for delay in 0.6 0.65 0.7 0.75 0.8 0.85 0.9 0.95 1.0; do
	"$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 4000 --temperature 0.01 --backend cuda --out "$out/killed.wav" >"$out/killed.log" 2>&1 &
	sp=$!
	w=
	for _ in $(seq 1 200); do w=$(pgrep -P $sp -f proscenium-gpu | head -1); [ -n "$w" ] && break; sleep 0.05; done
	sleep $delay
	echo "delay $delay s: worker pid $w" >>"$L"
	[ -n "$w" ] && kill -9 "$w"
	wait $sp
	rc=$?
	cat "$out/killed.log" >>"$L"
	echo "rc=$rc (want 1, the partial audio kept)" >>"$L"
	if [ $rc = 1 ] && grep -q "audio made before it" "$out/killed.log"; then
		ls -la "$out/killed.wav" >>"$L" 2>&1
		s the next take after the kill
		timeout 60 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 50 --backend cuda --out "$out/after.wav" >>"$L" 2>&1
		echo "rc=$? (want 0: a fresh worker)" >>"$L"
		break
	fi
done
s done
cat "$L"
