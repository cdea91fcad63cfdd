#!/bin/bash
# Lead, session 41, run 1 (one call, ≤ 560 s): the cast's voices primed together (3f1fed1), against the build before
# it (ce63a94), through the studio's service; then the notebook's take, step and tower figures at this code.
# 1. The engine's tests (TestCUDAEngine*: TestCUDAEnginePrimedVoice among them, now with Primed.Bytes) beside the
#    full-size checkpoint's writing.
# 2. `serve --ui` at full geometry from disk, before (.carry-fo: ce63a94's proscenium and proscenium-gpu) and after,
#    with no cap and under a 22 GiB cap: h200-lead41-cast.py twice (voices Ada and Bea made by CreateVoice, a project
#    saved with the cast [Ada, Bea], 3 s, the whole script in both voices twice, a line in Ada).
# 3. On an H200 only, with the time left: bench-take (fast, B = 1 and 4, six takes, two rounds; exact, two takes), bench-backbone
#    (1, 2, 4, 8 rows), bench-tower (1, 2, 3, 4, 8 rows from 60 cache rows).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit), .carry-fo (ce63a94). The notebook's logs
# (docs/perf/*.tgz) are moved out of the tree for the call (the bundles and the tree must fit 64 MiB).
set -u
. docs/perf/run-lib.sh
run_setup run1 560 .carry-fa .carry-fb
bash docs/perf/h200-lead6-unpack.sh .carry-fo $ROOT/.carry-o >> $O/unpack.log 2>&1
(cd cmd/proscenium-gpu && T 120 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
[ -d /tmp/full ] || T 90 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
wait
cast() { # PORT KEY: two rounds of the whole script in a new cast
	T 40 cast-$2 python3 docs/perf/h200-lead41-cast.py $1 $ROOT/engine/audio/decode/testdata/ref.wav 3
	T 40 cast2-$2 python3 docs/perf/h200-lead41-cast.py $1 $ROOT/engine/audio/decode/testdata/ref.wav 3 2
}
serve_each "none 22GiB" cast
grep -q H200 $O/machine.txt || { echo "not an H200: the benches left out" >> $O/steps.log; BENCH=no; }
[ "${BENCH:-yes}" = yes ] && T 50 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
[ "${BENCH:-yes}" = yes ] && T 15 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
[ "${BENCH:-yes}" = yes ] && T 15 tw $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill 60
[ "${BENCH:-yes}" = yes ] && T 30 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics exact
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine
grep -h -A6 -- '--- FAIL' $O/engine.log | head -20
grep -h 'PrimedVoice' $O/engine.log | head -8
for k in old-none new-none old-22GiB new-22GiB; do for r in cast cast2; do echo "== $r-$k"; cut -c1-260 $O/$r-$k.log; done; done
for f in take take-exact; do echo "-- $f"; grep -hE "^take|takes after|first audio  |  frame  |batch [1-8]|backbone step|device memory|held" $O/$f.log | cut -c1-200; done
echo "-- rows: $(grep -hE '^B =' $O/rows.log | cut -c1-80 | tr '\n' ' ')"
echo "-- tower: $(grep -h '^takes' $O/tw.log | cut -c1-60 | tr '\n' ';')"
