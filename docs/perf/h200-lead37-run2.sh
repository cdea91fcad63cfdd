#!/bin/bash
# Lead, session 37, run 2 (one call, ≤ 240 s): the smaller-card path through the product. A full-size checkpoint
# from disk served by `serve --ui --backend cuda --batch 4 --memory-cap C` for C = 22GiB and 30GiB (what the tier plan
# gives 24 and 32 GB cards), each: the load timed through /healthz, the product (a new 10 s voice and requests in it,
# four concurrent requests, the studio's readout), the studio's /api/Stats whole, and the device memory nvidia-smi saw
# every half second (the worker's context included) against the cap. Until now the caps ran only in bench-take on
# synthetic weights made on the device.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run2 240 .carry-fa .carry-fb
T 70 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
for cap in 22GiB 30GiB; do
	port=18200; [ "$cap" = 30GiB ] && port=18201
	( while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; sleep 0.5; done ) > "$O/smi-$cap.log" 2>&1 &
	smi=$!
	XDG_DATA_HOME=/tmp/xdg-$cap XDG_CONFIG_HOME=/tmp/xdgc-$cap "$X/proscenium" serve --ui --model /tmp/full --backend cuda \
		--batch 4 --port $port --settings "" --memory-cap $cap > "$O/serve-$cap.log" 2> "$O/serve-$cap.err" &
	echo $! > "$O/serve.pid"; t0=$(date +%s.%N)
	for i in $(seq 240); do
		r=$(curl -s --max-time 2 http://127.0.0.1:$port/healthz)
		echo "$r" | grep -q '"model_loaded":true' && break
		[ "$(date +%s)" -ge "$END" ] && break; sleep 0.5
	done
	awk -v a="$(date +%s.%N)" -v b="$t0" -v r="$r" 'BEGIN { printf "model loaded after %.1f s: %s\n", a - b, r }' > "$O/load.log"
	cp "$O/load.log" "$O/load-$cap.log"
	T 45 product python3 docs/perf/h200-lead5-product.py $port $ROOT/engine/audio/decode/testdata/ref.wav
	T 25 connected1 python3 docs/perf/h200-lead9-concurrent.py $port 4
	T 40 studio python3 docs/perf/h200-lead12-studio.py $port $ROOT/engine/audio/decode/testdata/ref.wav
	curl -s -X POST -H 'Content-Type: application/json' -d '[]' http://127.0.0.1:$port/api/Stats > "$O/stats-$cap.json" 2>/dev/null
	for n in product connected1 studio; do cp "$O/$n.log" "$O/$n-$cap.log"; done
	kill $(cat "$O/serve.pid") 2>/dev/null
	for i in $(seq 40); do kill -0 $(cat "$O/serve.pid") 2>/dev/null || break; sleep 0.5; done
	sleep 2; kill $smi
	echo "== cap $cap"; product_report
	echo "-- serve's stderr"; grep -v "level=INFO" "$O/serve-$cap.err" | head -5
	echo "-- stats"; head -c 1500 "$O/stats-$cap.json"; echo
	echo "-- device memory (MiB, nvidia-smi, every 0.5 s): max $(sort -n "$O/smi-$cap.log" | tail -1) of cap $cap"
done
run_pack
cat $O/machine.txt
