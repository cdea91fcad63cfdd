#!/bin/bash
# Lead, session 42, run 3 (one call, ≤ 240 s): the review's change on a GPU — the worker's load takes its
# LoadRequest (openCUDAEngine) and checks it by LoadRequest.Check. The engine's tests (TestCUDAEngine*), then serve's
# path through the worker's opener: `serve --ui --voice-cache 1GiB` at full geometry, uncapped, run 1's cast of four
# 20 s voices (h200-lead42-cast.py).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run3 240 .carry-fa .carry-fb
(cd cmd/proscenium-gpu && T 120 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
[ -d /tmp/full ] || T 90 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
wait
cast() { # PORT KEY
	T 75 cast-$2 python3 docs/perf/h200-lead42-cast.py $1 $ROOT/engine/audio/decode/testdata/ref.wav 12 20,20,20,20
}
serve_variants none cast "1GiB=--voice-cache 1GiB"
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine
grep -h -A6 -- '--- FAIL' $O/engine.log | head -20
grep -hE -- '--- (PASS|FAIL): TestCUDAEngine' $O/engine.log
echo "== 1GiB-none: $(cut -c1-200 $O/load-1GiB-none.log)"; cut -c1-260 $O/cast-1GiB-none.log
