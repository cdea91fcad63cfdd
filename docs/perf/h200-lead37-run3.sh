#!/bin/bash
# Lead, session 37, run 3 (one call, ≤ 300 s), on main d8109d1: the voice cache in pinned host memory under the
# host tier. The prefix-cache tests under both policies (the new host-tier one beside the device one) and the tier
# test of the engine, then the product through `serve --memory-cap C` (22GiB, 30GiB) as in run 2: a new voice's
# later requests now restore it from host memory instead of prefilling it.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run3 300 .carry-fa .carry-fb
P1='TestFramesPrefixCacheInHostMemory|TestFramesPrefixCacheMatchesUncached'
(cd engine/cuda && T 100 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$P1") &
(cd cmd/proscenium-gpu && T 100 engine-tiers $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngineTiers') &
T 70 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
wait
(cd engine/cuda && T 100 tests-exact $X/cuda.test -test.v -test.run "$P1")
for cap in 22GiB 30GiB; do
	port=18300; [ "$cap" = 30GiB ] && port=18301
	XDG_DATA_HOME=/tmp/xdg-$cap XDG_CONFIG_HOME=/tmp/xdgc-$cap "$X/proscenium" serve --ui --model /tmp/full --backend cuda \
		--batch 4 --port $port --settings "" --memory-cap $cap > "$O/serve-$cap.log" 2> "$O/serve-$cap.err" &
	echo $! > "$O/serve.pid"; t0=$(date +%s.%N)
	for i in $(seq 240); do
		r=$(curl -s --max-time 2 http://127.0.0.1:$port/healthz)
		echo "$r" | grep -q '"model_loaded":true' && break
		[ "$(date +%s)" -ge "$END" ] && break; sleep 0.5
	done
	awk -v a="$(date +%s.%N)" -v b="$t0" -v r="$r" 'BEGIN { printf "model loaded after %.1f s: %s\n", a - b, r }' > "$O/load.log"
	T 45 product python3 docs/perf/h200-lead5-product.py $port $ROOT/engine/audio/decode/testdata/ref.wav
	T 40 studio python3 docs/perf/h200-lead12-studio.py $port $ROOT/engine/audio/decode/testdata/ref.wav
	curl -s -X POST -H 'Content-Type: application/json' -d '[]' http://127.0.0.1:$port/api/Stats > "$O/stats-$cap.json" 2>/dev/null
	for n in load product studio; do cp "$O/$n.log" "$O/$n-$cap.log"; done
	kill $(cat "$O/serve.pid") 2>/dev/null
	for i in $(seq 40); do kill -0 $(cat "$O/serve.pid") 2>/dev/null || break; sleep 0.5; done
	echo "== cap $cap"; cat "$O/load.log" | cut -c1-120; tail -n 6 "$O/product.log"; tail -n 6 "$O/studio.log" | cut -c1-400
	grep -v "level=INFO" "$O/serve-$cap.err" | head -3
	echo "-- stats"; head -c 900 "$O/stats-$cap.json"; echo
done
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally tests-fast tests-exact engine-tiers
for s in tests-fast tests-exact engine-tiers; do echo "-- $s"; grep -E '^(=== RUN|--- |    .*(host tier|cache:|FAIL|restored))' $O/$s.log | grep -v '=== RUN' | head -24; done
