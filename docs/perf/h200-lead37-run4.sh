#!/bin/bash
# Lead, session 37, run 4 (one call, ≤ 330 s): the voice cache in host memory, measured on one machine.
# 1. bench-take of a 10 s cloned voice, uncached then from the voice cache: uncapped, under 22 GiB and 30 GiB
#    caps (the host tier; before d8109d1 the bench refused: the cache took no voice there), and a 30 s voice at
#    22 GiB. 2. The product through serve under a 22 GiB cap with the worker before the change (a5570ab, .carry-fo)
#    and after it (d8109d1), on the same machine: the default voice, a new voice's first request and its later ones.
# Carried: .carry-fs (d8109d1's proscenium-gpu alone: the tree and three bundles pass the 64 MiB a call), .carry-fb
# (h200-lead6-build.sh on d8109d1) and .carry-fo (a5570ab's proscenium-gpu).
set -u
. docs/perf/run-lib.sh
run_setup run4 330 .carry-fs .carry-fb
bash docs/perf/h200-lead6-unpack.sh .carry-fo $ROOT/.carry-o >> $O/unpack.log 2>&1
T 40 voice-10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 50 voice-10-22g $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile -cap 23622320128
T 50 voice-10-30g $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile -cap 32212254720
T 50 voice-30-22g $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile -cap 23622320128
T 70 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
for w in old new; do
	worker=$P port=18401; [ $w = old ] && worker=$ROOT/.carry-o/proscenium-gpu port=18400
	PROSCENIUM_GPU_WORKER=$worker XDG_DATA_HOME=/tmp/xdg-$w XDG_CONFIG_HOME=/tmp/xdgc-$w "$X/proscenium" serve --ui \
		--model /tmp/full --backend cuda --batch 4 --port $port --settings "" --memory-cap 22GiB > "$O/serve-$w.log" 2> "$O/serve-$w.err" &
	echo $! > "$O/serve.pid"
	for i in $(seq 240); do
		r=$(curl -s --max-time 2 http://127.0.0.1:$port/healthz)
		echo "$r" | grep -q '"model_loaded":true' && break
		[ "$(date +%s)" -ge "$END" ] && break; sleep 0.5
	done
	T 45 product-$w python3 docs/perf/h200-lead5-product.py $port $ROOT/engine/audio/decode/testdata/ref.wav
	kill $(cat "$O/serve.pid") 2>/dev/null
	for i in $(seq 40); do kill -0 $(cat "$O/serve.pid") 2>/dev/null || break; sleep 0.5; done
done
run_pack
cat $O/machine.txt; cat $O/steps.log
for s in voice-10 voice-10-22g voice-10-30g voice-30-22g; do echo "== $s"; grep -E '^(model|prompt|reference|  uncached|  from the cache|  voice cache|take |first audio)' $O/$s.log | cut -c1-200; grep -i -E 'error|refus' $O/$s.log | head -2; done
for w in old new; do echo "== serve 22GiB, worker $w"; cat $O/product-$w.log; grep -v level=INFO $O/serve-$w.err | head -2; done
