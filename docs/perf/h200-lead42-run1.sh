#!/bin/bash
# Lead, session 42, run 1 (one call, ≤ 500 s): the voice cache's size as a setting (serve --voice-cache), through the
# studio's service at full geometry.
# 1. The engine's tests (TestCUDAEngine*: TestCUDAEngineVoiceCacheSize, new, loads the engine with a cache of a voice's
#    state and a byte less; TestCUDAEnginePrimedVoice) and the voice cache's frame tests, beside the full-size
#    checkpoint's writing.
# 2. `serve --ui` at full geometry from disk, with no cap and under a 22 GiB cap (the cache in pinned host memory
#    there), with the default voice cache (512 MiB) and with --voice-cache 1GiB: h200-lead42-cast.py with four 20 s
#    voices (the default cache holds them alone, not beside them together), 12 s to prime, the whole script twice,
#    a line in V4.
# 3. On an H200 only, with the time left: the notebook's take, step and tower benches (as session 41's run 2).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit). The notebook's logs (docs/perf/*.tgz) are
# moved out of the tree for the call (the bundles and the tree must fit 64 MiB).
set -u
. docs/perf/run-lib.sh
run_setup run1 500 .carry-fa .carry-fb
(cd cmd/proscenium-gpu && T 150 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
[ -d /tmp/full ] || T 90 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
wait
(cd engine/cuda && T 60 frames $X/cuda.test -test.v -test.run '^(TestFramesPrefixCacheMatchesUncached|TestFramesPrefixCacheInHostMemory)$')
cast() { # PORT KEY
	T 75 cast-$2 python3 docs/perf/h200-lead42-cast.py $1 $ROOT/engine/audio/decode/testdata/ref.wav 12 20,20,20,20
}
serve_variants "${CAPS:-none 22GiB}" cast default= "1GiB=--voice-cache 1GiB"
table_benches
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine frames
grep -h -A6 -- '--- FAIL' $O/engine.log $O/frames.log | head -20
grep -hE 'VoiceCacheSize|PrimedVoice' $O/engine.log | head -12
for k in default-none 1GiB-none default-22GiB 1GiB-22GiB; do echo "== $k: $(cut -c1-200 $O/load-$k.log)"; grep -h 'proscenium-gpu: /tmp' $O/serve-$k.err | cut -c1-330; cut -c1-260 $O/cast-$k.log; done
table_report
