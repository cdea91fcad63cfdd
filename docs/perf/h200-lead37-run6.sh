#!/bin/bash
# Lead, session 37, run 6 (one call, ≤ 200 s), on main 05c155d: the real-time bound with a take's first two steps
# unmeasured. Four concurrent streamed requests (120 frames each) through serve under a 22 GiB cap, right after the
# load and again, as in run 5.
# Carried: .carry-fs (05c155d's proscenium-gpu) and .carry-fb (the CLI).
set -u
. docs/perf/run-lib.sh
run_setup run6 200 .carry-fs .carry-fb
T 70 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
XDG_DATA_HOME=/tmp/xdg XDG_CONFIG_HOME=/tmp/xdgc "$X/proscenium" serve --ui --model /tmp/full --backend cuda \
	--batch 4 --port 18600 --settings "" --memory-cap 22GiB > "$O/serve.log" 2> "$O/serve.err" &
echo $! > "$O/serve.pid"
wait_loaded 18600
T 40 connected python3 docs/perf/h200-lead9-concurrent.py 18600 4
T 40 again python3 docs/perf/h200-lead9-concurrent.py 18600 4
kill $(cat "$O/serve.pid") 2>/dev/null
run_pack
cat $O/machine.txt; cat $O/steps.log; cat $O/load.log
echo "== right after the load"; cat $O/connected.log; echo "== again"; cat $O/again.log
grep -v level=INFO "$O/serve.err" | head -3
