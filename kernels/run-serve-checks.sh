#!/bin/bash
# The same seed on the GPU through `proscenium synth`, the studio's service
# (`serve --ui`: /api/Speak, /api/takes/ID/pcm) and the speech API (pcm
# streamed and whole, wav), on a demo checkpoint (docs/PERF.md, "GPU take");
# a voice created through the API from REFERENCE.wav (encoded in the GPU
# worker), its codes against the CPU encoder's, and a take in it.
# Run from the folder `make cuda-test-bins` fills. Exits 1 on any mismatch
# (servecheck.py prints each as "FAIL: ..."); a pass prints "all serve
# checks passed".
# Usage: run-serve-checks.sh OUTDIR [REFERENCE.wav]
out=${1:?usage: run-serve-checks.sh OUTDIR}
dir=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export PROSCENIUM_GPU_WORKER=$dir/proscenium-gpu
[ -d "$dir/lib" ] && export LD_LIBRARY_PATH=$dir/lib
T="Hello there, this is a take made on the GPU."
ck=$out/ck-demo
"$dir/proscenium-gpu" make-tiny -tokenizer "$dir/tokenizer.json" "$ck" >/dev/null || exit 1
status=0
timeout 60 "$dir/proscenium" synth --model "$ck" --text "$T" --seed 5 --max-frames 200 --backend cuda --format float32 --out "$out/synth.wav" >"$out/serve-checks.log" 2>&1 ||
	{ echo "FAIL: synth on the GPU" >>"$out/serve-checks.log"; status=1; }
ref=${2:-}
XDG_DATA_HOME=$out/xdg "$dir/proscenium" serve --ui --model "$ck" --backend cuda --port 18080 --settings "" >"$out/serve.log" 2>&1 &
sp=$!
timeout 120 python3 "$dir/servecheck.py" "$T" "$out/synth.wav" $ref >>"$out/serve-checks.log" 2>&1 || status=1
kill $sp
wait $sp 2>/dev/null
if [ -n "$ref" ]; then
	# The library's codes (encoded in the GPU worker) against the CPU encoder's.
	mkdir -p "$out/cpu-encode"
	"$dir/proscenium" debug encode --codec "$ck/codec.pth" --audio "$ref" --out "$out/cpu-encode" >>"$out/serve-checks.log" 2>&1
	lib=$(find "$out/xdg" -name codes.npy | head -1)
	python3 -c "
import sys, numpy as np
a, b = np.load('$lib'), np.load('$out/cpu-encode/codes.npy')
d = int((a != b).any(axis=0).sum()) if a.shape == b.shape else -1
print('voice library codes (GPU worker) vs CPU debug encode: shape %s vs %s, frames differing: %d' % (a.shape, b.shape, d))
if d < 0: sys.exit('FAIL: the voice library codes have another shape than the CPU encoder\'s')
" >>"$out/serve-checks.log" 2>&1 || status=1
fi
[ $status = 0 ] || echo "serve checks FAILED (exit 1)" >>"$out/serve-checks.log"
cat "$out/serve-checks.log"
exit $status
