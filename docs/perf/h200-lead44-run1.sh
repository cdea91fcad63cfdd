#!/bin/bash
# Lead, session 44, run 1 — RUN in session 45 (08:15 UTC, an H100, bundles at 7f9c298; results in PERF "Session 45", docs/perf/h100-lead45-run1-7f9c298.tgz); sixteen calls in session 44 and eight in session 45 started no machine before it
# One call, ≤ 560 s or $BUDGET: the cast chips' readiness (8a7d232: the voice cache's keys
# in the stats) through serve at full geometry, and what sessions 42 and 43 left unrun on a GPU. In order, so that a
# short budget leaves out the last: the whole check (run-lib.sh: fast and exact, the forced tensor-core attention, the
# engine's tests, the agreement with the CPU; session 43 ran its first 86 s only) while a full-size checkpoint is
# written; `serve --ui`, four 20 s voices cast (h200-lead42-cast.py, which prints the studio's voices_ready and
# cast_ready after each take), with --voice-cache 1GiB (every voice and the four together), then with the default
# voice cache (512 MiB: the four voices, not the four together beside them); the step and the tower under exact (session 42 ran exact in the take bench
# only); on an H200, the Current figures' take, step and tower benches (table_benches).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run1 ${BUDGET:-560} .carry-fa .carry-fb
cast() { # PORT KEY
	T 75 cast-$2 python3 docs/perf/h200-lead42-cast.py $1 $ROOT/engine/audio/decode/testdata/ref.wav 12 20,20,20,20
}
whole_check_tests
if [ "${BUDGET:-560}" -ge 400 ]; then
	[ -d /tmp/full ] || T 150 make-full "$X/proscenium" make-tiny /tmp/full --geometry full &
	run_whole_check
	wait
	serve_variants none cast "1GiB=--voice-cache 1GiB" "default="
else
	# Under 400 s no full-size checkpoint is written: serve runs on the demo checkpoint (1 GiB only), first under
	# 300 s (the new code's path before the whole check, which the budget then cuts).
	$P make-tiny -tokenizer $X/tokenizer.json -geometry demo /tmp/ck-demo > /dev/null; export MODEL=/tmp/ck-demo
	[ "${BUDGET:-560}" -lt 300 ] && serve_variants none cast "1GiB=--voice-cache 1GiB"
	run_whole_check
	[ "${BUDGET:-560}" -ge 300 ] && serve_variants none cast "1GiB=--voice-cache 1GiB"
fi
T 20 rows-exact $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics exact
T 20 tw-exact $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill 60 -numerics exact
table_benches
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally tests-exact tests-fast tests-forced engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
agreement_report
for k in 1GiB-none default-none; do echo "== $k: $(cut -c1-200 $O/load-$k.log)"; cut -c1-330 $O/cast-$k.log; done
echo "-- rows exact: $(grep -hE '^B =' $O/rows-exact.log | cut -c1-80 | tr '\n' ' ')"
echo "-- tower exact: $(grep -h '^takes' $O/tw-exact.log | cut -c1-60 | tr '\n' ';')"
table_report
