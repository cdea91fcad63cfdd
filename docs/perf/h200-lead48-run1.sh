#!/bin/bash
# Lead, session 48, run 1: one call, ≤ 300 s or $BUDGET. Speak all through the product at full geometry on any card
# (h200-lead48-speakall.py: eight lines of 200 frames one at a time, and in groups of four through SpeakLines, two
# rounds each); then, on an H200 only, the Current figures' take, step and tower benches (table_benches; the GPU code
# is session 46's 9178c55).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup lead48-run1 ${BUDGET:-300} .carry-fa .carry-fb
speakall() { # PORT KEY
	T 100 speakall-$2 python3 docs/perf/h200-lead48-speakall.py $1 8 200 4
}
[ -d /tmp/full ] || T 150 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
serve_variants none speakall "b4="
table_benches
run_pack
cat $O/machine.txt; cat $O/steps.log
for f in $O/speakall-*.log; do echo "== $f"; cut -c1-260 $f; done
grep -h "fits on the device\|experts in host" $O/serve-*.err | cut -c1-200 | head -2
table_report
