#!/bin/bash
# Lead, session 37, run 5 (one call, ≤ 300 s), on main 5af21e2: the scheduler's real-time bound under a host tier.
# The engine's tests (batched takes with every expert on the device: no bound, unchanged; the tiers), then four
# concurrent streamed requests (120 frames each) through serve under 22 GiB and 30 GiB caps, as in run 2: each
# request's first and last byte, and the batch sizes the take log says.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run5 300 .carry-fa .carry-fb
(cd cmd/proscenium-gpu && T 120 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
T 70 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
wait
for cap in 22GiB 30GiB; do
	port=18500; [ "$cap" = 30GiB ] && port=18501
	XDG_DATA_HOME=/tmp/xdg-$cap XDG_CONFIG_HOME=/tmp/xdgc-$cap "$X/proscenium" serve --ui --model /tmp/full --backend cuda \
		--batch 4 --port $port --settings "" --memory-cap $cap > "$O/serve-$cap.log" 2> "$O/serve-$cap.err" &
	echo $! > "$O/serve.pid"
	for i in $(seq 240); do
		r=$(curl -s --max-time 2 http://127.0.0.1:$port/healthz)
		echo "$r" | grep -q '"model_loaded":true' && break
		[ "$(date +%s)" -ge "$END" ] && break; sleep 0.5
	done
	T 40 connected-$cap python3 docs/perf/h200-lead9-concurrent.py $port 4
	T 40 again-$cap python3 docs/perf/h200-lead9-concurrent.py $port 4
	kill $(cat "$O/serve.pid") 2>/dev/null
	for i in $(seq 40); do kill -0 $(cat "$O/serve.pid") 2>/dev/null || break; sleep 0.5; done
	echo "== cap $cap"; cat $O/connected-$cap.log; echo "-- again"; cat $O/again-$cap.log
	grep -v level=INFO "$O/serve-$cap.err" | head -3; grep -o '"batch":[0-9]*' "$O/serve-$cap.log" "$O/serve-$cap.err" 2>/dev/null | sort | uniq -c | head
done
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine
