#!/bin/bash
# Lead, session 41, run 3 (one call, ≤ 330 s): the voices together bounded by a state's shape (3a490da) against the
# sum of the voices' states (7633dfe, run 1's build), through the studio's service: h200-lead41-cast4.py (four voices
# of 10, 9, 8 and 7 s, a project saved with the four cast, 6 s, the whole script twice, a line in V4), with no cap
# and under a 22 GiB cap (the voice cache in host memory there, the same 512 MiB); CAPS="none" for no cap alone.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at 799403e), .carry-fo (7633dfe's proscenium and
# proscenium-gpu). The notebook's logs (docs/perf/*.tgz) are moved out of the tree for the call.
set -u
. docs/perf/run-lib.sh
run_setup run3 330 .carry-fa .carry-fb
bash docs/perf/h200-lead6-unpack.sh .carry-fo $ROOT/.carry-o >> $O/unpack.log 2>&1
[ -d /tmp/full ] || T 90 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
cast4() { # PORT KEY
	T 45 cast4-$2 python3 docs/perf/h200-lead41-cast4.py $1 $ROOT/engine/audio/decode/testdata/ref.wav 6
}
serve_each "${CAPS:-none 22GiB}" cast4
run_pack
cat $O/machine.txt; cat $O/steps.log
for k in old-none new-none old-22GiB new-22GiB; do echo "== $k"; cut -c1-260 $O/cast4-$k.log; done
