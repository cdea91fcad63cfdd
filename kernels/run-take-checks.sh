#!/bin/bash
# The GPU take's end-to-end checks on a GPU machine (docs/PERF.md, "GPU take"):
# the take engine through the worker from the CLI (same seed same bytes, the
# CPU's codes, auto), a missing worker, a memory cap, kill -9 of the worker
# mid-take, then the same claims asserted in Go (proscenium-gpu.test). Run
# from the folder `make cuda-test-bins` fills (proscenium, proscenium-gpu,
# proscenium-gpu.test, tokenizer.json; lib/ with the CLI's audio libraries
# when the machine lacks them). Every check that fails prints "FAIL: ..." and
# the script exits 1; a pass ends with "all take checks passed".
# NUMERICS=fast holds the codes to nothing (the fast policy's takes may leave
# the CPU's); the default, exact, requires the CPU's codes.
# Usage: run-take-checks.sh OUTDIR
out=${1:?usage: run-take-checks.sh OUTDIR}
dir=$(cd "$(dirname "$0")" && pwd)
numerics=${NUMERICS:-exact}
mkdir -p "$out"
export PROSCENIUM_GPU_WORKER=$dir/proscenium-gpu
[ -d "$dir/lib" ] && export LD_LIBRARY_PATH=$dir/lib
P=$dir/proscenium
L=$out/take-checks.log
: >"$L"
status=0
s() { echo "== $(date -u +%T) $*" >>"$L"; }
fail() { echo "FAIL: $*" >>"$L"; status=1; }
# want RC CMD...: runs CMD (its output to the log) and fails unless it exits RC.
want() {
	local rc=$1
	shift
	"$@" >>"$L" 2>&1
	local got=$?
	echo "rc=$got (want $rc)" >>"$L"
	[ "$got" = "$rc" ] || fail "exit status $got, want $rc: $*"
}
T="Hello there, this is a take made on the GPU."
ck=$out/ck-demo
s make-tiny
want 0 "$dir/proscenium-gpu" make-tiny -tokenizer "$dir/tokenizer.json" "$ck"
s probe
want 0 "$P" gpu probe
s synth cuda twice, same seed
for i in 1 2; do
	want 0 timeout 60 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 200 --backend cuda --numerics "$numerics" --out "$out/cuda$i.wav" --codes "$out/cuda$i.npy"
done
if cmp "$out/cuda1.wav" "$out/cuda2.wav" >>"$L" 2>&1; then echo "same seed: identical WAV" >>"$L"; else fail "same seed, different WAV"; fi
s synth cpu, same seed
want 0 timeout 120 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 200 --backend cpu --out "$out/cpu.wav" --codes "$out/cpu.npy"
if cmp "$out/cuda1.npy" "$out/cpu.npy" >>"$L" 2>&1; then
	echo "cuda codes == cpu codes" >>"$L"
elif [ "$numerics" = exact ]; then
	fail "the GPU's codes differ from the CPU's under the exact policy"
else
	echo "cuda codes differ from the cpu's ($numerics policy)" >>"$L"
fi
s synth auto
want 0 timeout 60 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 50 --out "$out/auto.wav"
tail -n 3 "$L" | grep -q "backend cuda" || fail "auto did not choose the GPU"
s missing worker, auto then cuda
PROSCENIUM_GPU_WORKER=/nonexistent want 0 timeout 120 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 20 --out "$out/miss.wav"
tail -n 3 "$L" | grep -q "backend cpu: auto: no usable GPU" || fail "auto without a worker did not fall back to the CPU saying why"
PROSCENIUM_GPU_WORKER=/nonexistent want 1 timeout 30 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 20 --backend cuda --out "$out/miss2.wav"
[ -e "$out/miss2.wav" ] && fail "a refused --backend cuda take wrote $out/miss2.wav"
s memory cap 50 MB
want 1 timeout 30 "$dir/proscenium-gpu" bench-take -model "$ck" -cap 50000000
tail -n 3 "$L" | grep -q "over the memory cap" || fail "the 50 MB cap's refusal does not say it is over the cap"
s synth --memory-cap 50MB: refused with the numbers, no WAV
want 1 timeout 60 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 20 --backend cuda --memory-cap 50MB --out "$out/capped.wav"
tail -n 3 "$L" | grep -q "even with every routed expert in host memory" || fail "synth --memory-cap 50MB: the refusal does not give the dense part"
[ -e "$out/capped.wav" ] && fail "a refused --memory-cap take wrote $out/capped.wav"
s kill -9 of the worker mid-take
# The demo take is short (well under a second on a GPU): kill at several
# delays after the worker appears until one lands inside the take. A kill
# before the take's audio or after its end is a miss; any other outcome, or
# no delay landing at all, fails.
landed=
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
	case $rc in
	0 | 1) ;;
	*) fail "kill -9 mid-take: the CLI exited $rc" ;;
	esac
	if [ $rc = 1 ] && grep -q "audio made before it" "$out/killed.log"; then
		landed=$delay
		[ -s "$out/killed.wav" ] || fail "kill -9 mid-take: the partial audio was not kept"
		ls -la "$out/killed.wav" >>"$L" 2>&1
		s the next take after the kill
		want 0 timeout 60 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 50 --backend cuda --out "$out/after.wav"
		break
	fi
done
[ -n "$landed" ] || fail "kill -9: no delay landed inside the take"
s voice cache through the worker: a reference voice twice in one process, then once alone
if timeout 120 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 50 --backend cuda --numerics "$numerics" --ref "$dir/ref.flac" --ref-text "The quick brown fox." --repeat 2 --json --out "$out/voice2.wav" >"$out/voice.json" 2>>"$L"; then
	cat "$out/voice.json" >>"$L"
	python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["takes"]
print("takes (prefill rows, prompt rows, from the cache, first audio ms):", [(x.get("prefill_rows"), x.get("prompt_rows"), x.get("voice_cached", False), x["time_to_first_audio_ms"]) for x in t])
ok = len(t) == 2 and not t[0].get("voice_cached") and t[1].get("voice_cached") and t[1]["prefill_rows"] < t[0]["prefill_rows"]
sys.exit(0 if ok else 1)' "$out/voice.json" >>"$L" 2>&1 || fail "the second take in a reference voice did not start from the voice cache"
else
	fail "synth in a reference voice with --repeat 2 failed"
fi
want 0 timeout 60 "$P" synth --model "$ck" --text "$T" --seed 5 --max-frames 50 --backend cuda --numerics "$numerics" --ref "$dir/ref.flac" --ref-text "The quick brown fox." --out "$out/voice1.wav"
if cmp "$out/voice1.wav" "$out/voice2.wav" >>"$L" 2>&1; then
	echo "the take from the voice cache == the uncached take (WAV bytes)" >>"$L"
elif [ "$numerics" = exact ]; then
	fail "the take from the voice cache differs from the uncached take under the exact policy"
else
	echo "the take from the voice cache differs from the uncached one ($numerics policy)" >>"$L"
fi
s the take engine on the GPU in Go: TestCUDAEngineTakes, TestCUDAEngineTiers, the same codes at every memory tier
want 0 "$dir/proscenium-gpu.test" -test.v -test.run 'TestCUDAEngineTakes|TestCUDAEngineTiers'
s done
if [ $status = 0 ]; then echo "all take checks passed" >>"$L"; else echo "take checks FAILED: $(grep -c '^FAIL: ' "$L")" >>"$L"; fi
cat "$L"
exit $status
