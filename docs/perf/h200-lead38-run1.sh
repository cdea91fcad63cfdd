#!/bin/bash
# Lead, session 38, run 1 (one call, ≤ 540 s), on main 05761b5: under a host tier, a take in a new voice runs its
# prefix's last pass and its script as one split pass (8730478), and a prefill pass stages only the experts its rows
# route to (05761b5). 1. The tests of both under fast (with the device-tier prefill tests the refactor touched), then
# exact, then the engine's. 2. bench-take of a 10 s cloned voice at a 22 GiB cap: the old way (-prefix-pass apart
# -host-stage layer), the split alone, both; with -hot-experts (every row routes to the same experts: the best case
# for routed staging) old and new; a 30 s voice at 22 GiB and a 10 s voice at 30 GiB, old and new. 3. serve at
# 22 GiB: the product (a new voice's first request is the split pass) and four concurrent requests right after the
# load and again (session 37's run 6: the real-time bound with a take's first two steps unmeasured, 05c155d).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh on 05761b5).
set -u
. docs/perf/run-lib.sh
run_setup run1 540 .carry-fa .carry-fb
NEW='TestBackbonePrefillSplit|TestFramesSplitPrefix|TestRoutedStaging|TestFramesPrefixCacheInHostMemory|TestFramesPrefixCacheMatchesUncached'
OLD='TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether'
(cd engine/cuda && T 170 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "^($NEW|$OLD)\$") &
T 70 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
wait
B="$P bench-take -synthetic full -prompt 60 -frames 100 -prompt-profile"
C22=23622320128 C30=32212254720
T 50 v10-22g-old $B -ref-seconds 10 -cap $C22 -prefix-pass apart -host-stage layer
T 50 v10-22g-new $B -ref-seconds 10 -cap $C22
T 50 v10-22g-split $B -ref-seconds 10 -cap $C22 -host-stage layer
T 50 hot-22g-old $B -ref-seconds 10 -cap $C22 -hot-experts -prefix-pass apart -host-stage layer
T 50 hot-22g-new $B -ref-seconds 10 -cap $C22 -hot-experts
(cd engine/cuda && T 120 tests-exact $X/cuda.test -test.v -test.run "^($NEW)\$")
(cd cmd/proscenium-gpu && T 100 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine')
T 50 v30-22g-old $B -ref-seconds 30 -cap $C22 -prefix-pass apart -host-stage layer
T 50 v30-22g-new $B -ref-seconds 30 -cap $C22
T 40 v10-30g-old $B -ref-seconds 10 -cap $C30 -prefix-pass apart -host-stage layer
T 40 v10-30g-new $B -ref-seconds 10 -cap $C30
XDG_DATA_HOME=/tmp/xdg XDG_CONFIG_HOME=/tmp/xdgc "$X/proscenium" serve --ui --model /tmp/full --backend cuda \
	--batch 4 --port 18800 --settings "" --memory-cap 22GiB > "$O/serve.log" 2> "$O/serve.err" &
echo $! > "$O/serve.pid"
wait_loaded 18800
T 40 connected python3 docs/perf/h200-lead9-concurrent.py 18800 4
T 40 again python3 docs/perf/h200-lead9-concurrent.py 18800 4
T 45 product python3 docs/perf/h200-lead5-product.py 18800 $ROOT/engine/audio/decode/testdata/ref.wav
kill $(cat "$O/serve.pid") 2>/dev/null
run_pack
cat $O/machine.txt; cat $O/steps.log; cat $O/load.log
run_tally tests-fast tests-exact engine
for s in v10-22g-old v10-22g-new v10-22g-split hot-22g-old hot-22g-new v30-22g-old v30-22g-new v10-30g-old v10-30g-new; do
	echo "== $s"; grep -E '^(prompt|reference|  uncached|  from the cache|first audio)|feedback rows' $O/$s.log | cut -c1-230
	grep -i -E 'error|refus|panic' $O/$s.log | head -2
done
echo "== right after the load"; cat $O/connected.log; echo "== again"; cat $O/again.log; echo "== product"; cat $O/product.log
grep -v level=INFO "$O/serve.err" | head -3
