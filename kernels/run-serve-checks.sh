#!/bin/bash
# The same seed on the GPU through `proscenium synth`, the studio's service
# (`serve --ui`: /api/Speak, /api/takes/ID/pcm) and the speech API (pcm
# streamed and whole, wav), on a demo checkpoint (docs/PERF.md, "GPU take").
# Run from the folder `make cuda-test-bins` fills. Usage: run-serve-checks.sh OUTDIR
out=${1:?usage: run-serve-checks.sh OUTDIR}
dir=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export PROSCENIUM_GPU_WORKER=$dir/proscenium-gpu
[ -d "$dir/lib" ] && export LD_LIBRARY_PATH=$dir/lib
T="Hello there, this is a take made on the GPU."
ck=$out/ck-demo
"$dir/proscenium-gpu" make-tiny -tokenizer "$dir/tokenizer.json" "$ck" >/dev/null || exit 1
timeout 60 "$dir/proscenium" synth --model "$ck" --text "$T" --seed 5 --max-frames 200 --backend cuda --format float32 --out "$out/synth.wav" >"$out/serve-checks.log" 2>&1
"$dir/proscenium" serve --ui --model "$ck" --backend cuda --port 18080 --settings "" >"$out/serve.log" 2>&1 &
sp=$!
timeout 120 python3 "$dir/servecheck.py" "$T" "$out/synth.wav" >>"$out/serve-checks.log" 2>&1
status=$?
kill $sp
wait $sp 2>/dev/null
cat "$out/serve-checks.log"
exit $status
