#!/bin/bash
# Lead, session 39, runs 4, 5, 6 and 8 (one call each, ≤ 300 s): the split joint begin through the product. 1. The engine's tests
# (batched takes, tiers) beside the full-size checkpoint's writing. 2. `serve --memory-cap 30GiB` at full geometry
# from disk, the worker before the change (e58c5c3, .carry-fo) and after it, on one machine: a new 10 s voice, then
# four streamed requests in it sent together (h200-lead38-voice-together.py), each first byte at the client. Run 4
# sent them to a fresh serve, whose scheduler begins one take alone before it has measured a step under the tier's
# real-time bound (so the four began one, then two, then one, before and after alike). Run 5 (WARM=1) first made one
# take in another voice from the same recording, whose prefix is the same: the four began from the voice cache. Run 6
# (WARM=1) first makes one take in the default voice (h200-lead39-warm.py), as a server in use has, then the four.
# Run 8 (RUN=8 WARM=1 CAP=22GiB) is run 6 under a 22 GiB cap.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit), .carry-fo (e58c5c3's proscenium-gpu). Two of
# session 10's logs are moved out of the tree for the call (three bundles and the tree pass the 64 MiB a call carries).
set -u
. docs/perf/run-lib.sh
run_setup run${RUN:-4} 300 .carry-fa .carry-fb
bash docs/perf/h200-lead6-unpack.sh .carry-fo $ROOT/.carry-o >> $O/unpack.log 2>&1
[ "${WARM:-}" = 1 ] || (cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
[ -d /tmp/full ] || T 80 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
wait
port=18900
for w in old new; do
	worker=$P; [ $w = old ] && worker=$ROOT/.carry-o/proscenium-gpu
	port=$((port + 1))
	PROSCENIUM_GPU_WORKER=$worker XDG_DATA_HOME=/tmp/xdg-$w XDG_CONFIG_HOME=/tmp/xdgc-$w "$X/proscenium" serve --ui \
		--model /tmp/full --backend cuda --batch 4 --port $port --settings "" --memory-cap ${CAP:-30GiB} > "$O/serve-$w.log" 2> "$O/serve-$w.err" &
	echo $! > "$O/serve.pid"
	wait_loaded $port; cp $O/load.log $O/load-$w.log
	[ "${WARM:-}" = 1 ] && T 30 warm-$w python3 docs/perf/h200-lead39-warm.py $port
	T 45 together-$w python3 docs/perf/h200-lead38-voice-together.py $port $ROOT/engine/audio/decode/testdata/ref.wav 4
	kill $(cat "$O/serve.pid") 2>/dev/null
	for i in $(seq 40); do kill -0 $(cat "$O/serve.pid") 2>/dev/null || break; sleep 0.5; done
done
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine
grep -h -A6 -- '--- FAIL' $O/engine.log | head -20
for w in old new; do echo "== $w: $(cut -c1-80 $O/load-$w.log)"; cat $O/warm-$w.log $O/together-$w.log 2>/dev/null; grep -o 'first_audio_ms=[0-9.]* batch=[0-9]*' $O/serve-$w.err | tr '\n' ' '; echo; grep -v level=INFO "$O/serve-$w.err" | grep -v 'model ready' | head -3; grep -h 'tier\|passes of' $O/serve-$w.err | cut -c1-300 | head -2; done
