#!/bin/bash
# Lead, session 38, run 4 (one call, ≤ 420 s), on main 92662ce: takes begun together in one new voice prefill its
# prefix once (the others wait and begin from the voice cache). 1. TestTakeFramesBeginTogether (its first round now
# has two takes in one new voice) under fast and exact, the host-tier voice-cache test, the engine's tests. 2. Through
# serve at full geometry from disk, uncapped and under a 22 GiB cap, the worker before the change (c2357b2,
# .carry-fo) and after it, on one machine: a new 10 s voice, then four streamed requests in it sent together.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh on 92662ce), .carry-fo (c2357b2's proscenium-gpu). Two of
# session 10's logs are moved out of the tree for the call (three bundles and the tree pass the 64 MiB a call carries).
set -u
. docs/perf/run-lib.sh
run_setup run4 420 .carry-fa .carry-fb
bash docs/perf/h200-lead6-unpack.sh .carry-fo $ROOT/.carry-o >> $O/unpack.log 2>&1
(cd engine/cuda && T 100 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^(TestTakeFramesBeginTogether|TestFramesPrefixCacheInHostMemory)$') &
T 70 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
wait
(cd engine/cuda && T 100 tests-exact $X/cuda.test -test.v -test.run '^(TestTakeFramesBeginTogether|TestFramesPrefixCacheInHostMemory)$')
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine')
port=18900
for cap in none 22GiB; do
	for w in old new; do
		worker=$P; [ $w = old ] && worker=$ROOT/.carry-o/proscenium-gpu
		capflag=""; [ $cap != none ] && capflag="--memory-cap $cap"
		port=$((port + 1))
		PROSCENIUM_GPU_WORKER=$worker XDG_DATA_HOME=/tmp/xdg-$cap-$w XDG_CONFIG_HOME=/tmp/xdgc-$cap-$w "$X/proscenium" serve --ui \
			--model /tmp/full --backend cuda --batch 4 --port $port --settings "" $capflag > "$O/serve-$cap-$w.log" 2> "$O/serve-$cap-$w.err" &
		echo $! > "$O/serve.pid"
		wait_loaded $port; cp $O/load.log $O/load-$cap-$w.log
		T 45 together-$cap-$w python3 docs/perf/h200-lead38-voice-together.py $port $ROOT/engine/audio/decode/testdata/ref.wav 4
		kill $(cat "$O/serve.pid") 2>/dev/null
		for i in $(seq 40); do kill -0 $(cat "$O/serve.pid") 2>/dev/null || break; sleep 0.5; done
	done
done
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally tests-fast tests-exact engine
grep -h -A6 -- '--- FAIL' $O/tests-*.log | head -20
grep -hE 'restored|fails alone|equal' $O/tests-fast.log | head -8
for cap in none 22GiB; do for w in old new; do echo "== $cap $w: $(cat $O/load-$cap-$w.log | cut -c1-60)"; cat $O/together-$cap-$w.log; grep -v level=INFO "$O/serve-$cap-$w.err" | grep -v 'model ready' | head -2; done; done
