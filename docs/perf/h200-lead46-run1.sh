#!/bin/bash
# Lead, session 46, run 1 — RUN at 09:09 UTC on an H100 (bundles at 9c524a4; results in PERF "Session 46"). One call, ≤ 300 s or $BUDGET: the whole script's readiness found missing on session 45's
# H100 run (a cast the default 512 MiB voice cache cannot hold together beside each voice: the whole script's take
# leaves the voices together in the cache, and the studio now knows their key without priming them, api.VoicePrimer's
# VoiceKey through the worker's voice_key op). In order, so that a short budget leaves out the last: the engine's GPU
# tests (TestCUDAEnginePrimedVoice now asks the voice's key before the prime and holds the prime's and an unprimed
# take's keys to it) while a full-size checkpoint is written; `serve --ui` at full geometry with the default voice
# cache, four 20 s voices cast (h200-lead42-cast.py prints the studio's voices_ready and cast_ready after each take:
# after the whole script's first take cast_ready must now be true); on an H200, the Current figures' take, step and
# tower benches (table_benches, fast and exact at this code); then the same cast with --voice-cache 1GiB (the voices
# together primed, as on session 45's run).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run1 ${BUDGET:-300} .carry-fa .carry-fb
cast() { # PORT KEY
	T 75 cast-$2 python3 docs/perf/h200-lead42-cast.py $1 $ROOT/engine/audio/decode/testdata/ref.wav 12 20,20,20,20
}
[ -d /tmp/full ] || T 150 make-full "$X/proscenium" make-tiny /tmp/full --geometry full &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine')
wait
serve_variants none cast "default="
table_benches
serve_variants none cast "1GiB=--voice-cache 1GiB"
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/engine.log | head -16
grep -h "PrimedVoice" $O/engine.log | head -8
for k in default-none 1GiB-none; do [ -f $O/cast-$k.log ] && { echo "== $k: $(cut -c1-200 $O/load-$k.log)"; cut -c1-330 $O/cast-$k.log; }; done
table_report
