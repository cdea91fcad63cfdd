#!/bin/bash
# Lead, session 36, run 3 (one call, ≤ 150 s), on main a5570ab: serve --model's new order on a GPU (8977606: the port
# taken and the server answering before the weights load). serve loads a full-size checkpoint from disk while
# /healthz is read every half second (health.log keeps the answers: "still loading" until the model is in), then the
# product through it (a new voice, four concurrent requests, the studio's readout), and a second serve on the same
# port, which must be refused at once.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run3 150 .carry-fa .carry-fb
T 70 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
XDG_DATA_HOME=/tmp/xdgf XDG_CONFIG_HOME=/tmp/xdgc "$X/proscenium" serve --ui --model /tmp/full --backend cuda \
	--batch 4 --port 18100 --settings "" > "$O/serve.log" 2> "$O/serve.err" &
echo $! > "$O/serve.pid"; t0=$(date +%s.%N)
el() { awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }'; }
for i in $(seq 240); do
	r=$(curl -s --max-time 2 http://127.0.0.1:18100/healthz)
	echo "$(el) s ${r:-(no answer)}" >> "$O/health.log"
	echo "$r" | grep -q '"model_loaded":true' && break
	sleep 0.5
done
echo "model loaded after $(el) s: $r" > "$O/load.log"
T 10 second-serve "$X/proscenium" serve --model /tmp/full --backend cuda --port 18100 --settings ""
run_product 18100
run_pack
cat $O/machine.txt
echo "-- health (first, last three)"; head -2 $O/health.log; tail -3 $O/health.log
echo "-- serve's stderr"; grep -v "level=INFO" $O/serve.err | head -5
echo "-- second serve: $(cat $O/second-serve.log) ($(grep second-serve $O/steps.log | tail -1))"
product_report
