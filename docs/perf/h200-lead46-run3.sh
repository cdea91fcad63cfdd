#!/bin/bash
# Lead, session 46, run 3 — RUN at 09:28 UTC on an H100 (bundles at 16789d5; results in PERF "Session 46"): run 2 again after TestCUDAExpertCacheHotSet's mend (its cap from the shortest prefill passes), with the bench JSON test. One call, ≤ 300 s or $BUDGET: the automatic voice cache (759c092: a worker load that sets
# no size gives the cache an eighth of the device's room beside the model, 512 MiB to 8 GiB). In order, so that a short
# budget leaves out the last: the engine's GPU tests (TestCUDAEngineVoiceCacheSize holds the size a load with none set
# gets to cuda.AutoVoiceCache of its tier's room; the tier and expert-cache tests now set the default they subtract)
# while a full-size checkpoint is written; `serve --ui` at full geometry with no voice cache size set, four 20 s voices
# cast (h200-lead42-cast.py: with the automatic size the four together are primed, so the whole script's first take
# starts from the cache; the worker's load line says the size); on an H200, the Current figures' take, step and tower
# benches (table_benches, fast and exact at this code).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run3 ${BUDGET:-300} .carry-fa .carry-fb
cast() { # PORT KEY
	T 75 cast-$2 python3 docs/perf/h200-lead42-cast.py $1 $ROOT/engine/audio/decode/testdata/ref.wav 12 20,20,20,20
}
[ -d /tmp/full ] || T 150 make-full "$X/proscenium" make-tiny /tmp/full --geometry full &
(cd cmd/proscenium-gpu && T 150 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine|TestCUDAExpertCacheHotSet|TestBenchJSONSaysItsUnits')
wait
serve_variants none cast "auto="
table_benches
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/engine.log | head -16
grep -h "no size asked" $O/engine.log | head -4
for k in auto-none; do [ -f $O/cast-$k.log ] && { echo "== $k: $(cut -c1-200 $O/load-$k.log)"; grep -h "fits on the device\|experts in host" $O/serve-$k.err | cut -c1-260 | head -2; cut -c1-330 $O/cast-$k.log; }; done
table_report
