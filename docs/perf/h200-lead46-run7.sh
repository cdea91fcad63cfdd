#!/bin/bash
# Lead, session 46, run 7 — RUN at 10:05 UTC on an H100 (bundles at 9178c55; results in PERF "Session 46"). One call, ≤ 200 s or $BUDGET: the automatic voice cache under the host tier (a worker load
# that sets no size, under a memory cap that keeps experts in host memory, gets an eighth of the host's memory left
# beside the pinned weights and the reserve, up to 8 GiB). The worker's whole GPU test binary while a full-size
# checkpoint is written; then `serve --ui --memory-cap 22GiB` at full geometry with no voice cache size set, four 20 s
# voices cast (h200-lead42-cast.py): the four together now primed, so the whole script's first take starts from the
# cache (session 42 on an H100 under the same cap: 1 622.5 ms uncached with 512 MiB, 275.0 ms with --voice-cache 1GiB).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run7 ${BUDGET:-200} .carry-fa .carry-fb
cast() { # PORT KEY
	T 90 cast-$2 python3 docs/perf/h200-lead42-cast.py $1 $ROOT/engine/audio/decode/testdata/ref.wav 15 20,20,20,20
}
[ -d /tmp/full ] || T 150 make-full "$X/proscenium" make-tiny /tmp/full --geometry full &
(cd cmd/proscenium-gpu && T 110 engine-all $X/proscenium-gpu.test -test.v -test.run .)
wait
serve_variants 22GiB cast "auto="
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine-all
grep -h -B2 -A6 "^--- FAIL\|^    --- FAIL" $O/engine-all.log | cut -c1-300 | head -30
for k in auto-22GiB; do [ -f $O/cast-$k.log ] && { echo "== $k: $(cut -c1-200 $O/load-$k.log)"; grep -h 'proscenium-gpu: /tmp\|in host memory' $O/serve-$k.err | cut -c1-400 | head -2; cut -c1-330 $O/cast-$k.log; }; done
