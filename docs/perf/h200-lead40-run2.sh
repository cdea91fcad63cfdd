#!/bin/bash
# Lead, session 40, run 2 (one call, ≤ 480 s): run 1 again on 358c2f1 (after 3e3fea0: a prime of a voice the cache holds by
# its turn begins nothing; and the review's helpers), two rounds of voices a serve, and engine/cuda's voice-cache tests;
# called with CAPS=22GiB (the device time left). As run 1: 1. The engine's tests
# (TestCUDAEngine*: TestCUDAEnginePrimedVoice among them, fast and exact, batch 1 and 4) beside the full-size
# checkpoint's writing. 2. `serve` at full geometry from disk, the build before priming (98223cd, .carry-fo: the CLI
# and its worker) and after it, on one machine, with no cap and under a 22 GiB cap (experts in host memory):
# h200-lead40-primed.py (a new 10 s voice, 3 s, two requests in it; another new voice spoken in at once).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit), .carry-fo (98223cd's proscenium and
# proscenium-gpu). Two of session 10's logs are moved out of the tree for the call (three bundles).
set -u
. docs/perf/run-lib.sh
run_setup run${RUN:-2} 480 .carry-fa .carry-fb
bash docs/perf/h200-lead6-unpack.sh .carry-fo $ROOT/.carry-o >> $O/unpack.log 2>&1
(cd cmd/proscenium-gpu && T 120 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 150 cache $X/cuda.test -test.v -test.run '^(TestFramesPrefixCacheMatchesUncached|TestFramesPrefixCacheInHostMemory|TestFramesSplitPrefix|TestTakeFramesBeginTogether|TestTakeFramesBeginTogetherSplit|TestTakeFramesMatchAlone)$') &
[ -d /tmp/full ] || T 80 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
wait
port=18900
for cap in ${CAPS:-none 22GiB}; do
	for w in old new; do
		cli=$X/proscenium worker=$P; [ $w = old ] && cli=$ROOT/.carry-o/proscenium worker=$ROOT/.carry-o/proscenium-gpu
		capflag=""; [ $cap = none ] || capflag="--memory-cap $cap"
		port=$((port + 1)); k=$w-$cap
		PROSCENIUM_GPU_WORKER=$worker XDG_DATA_HOME=/tmp/xdg-$k XDG_CONFIG_HOME=/tmp/xdgc-$k "$cli" serve --ui \
			--model /tmp/full --backend cuda --batch 4 --port $port --settings "" $capflag > "$O/serve-$k.log" 2> "$O/serve-$k.err" &
		echo $! > "$O/serve.pid"
		wait_loaded $port; cp $O/load.log $O/load-$k.log
		T 60 primed-$k python3 docs/perf/h200-lead40-primed.py $port $ROOT/engine/audio/decode/testdata/ref.wav 3
		T 60 primed2-$k python3 docs/perf/h200-lead40-primed.py $port $ROOT/engine/audio/decode/testdata/ref.wav 3 2
		curl -s -X POST -H 'Content-Type: application/json' -d '[]' http://127.0.0.1:$port/api/Stats > $O/stats-$k.json
		kill $(cat "$O/serve.pid") 2>/dev/null
		for i in $(seq 40); do kill -0 $(cat "$O/serve.pid") 2>/dev/null || break; sleep 0.5; done
	done
done
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine cache
grep -h -A6 -- '--- FAIL' $O/engine.log $O/cache.log | head -20
grep -h 'primed\|PrimedVoice' $O/engine.log | head -12
for f in $O/primed-*.log $O/primed2-*.log; do echo "== $(basename $f .log)"; sed 's/, [0-9]* bytes; the take:/:/; s/, whole [0-9]* ms//' $f; done
for k in old-none new-none old-22GiB new-22GiB; do echo "== $k"; grep -o 'first_audio_ms=[0-9.]* batch=[0-9]*' $O/serve-$k.err | tr '\n' ' '; echo; grep -v level=INFO "$O/serve-$k.err" | grep -v 'model ready' | head -3; grep -o '"voice_cache_bytes":[0-9]*,"voice_cache_cap_bytes":[0-9]*,"voice_entries":[0-9]*' $O/stats-$k.json; done
