#!/bin/bash
# Lead, session 25, run 5 (one call, ≤ 420 s): the figures of the session's final code (ahead25), beside the same
# binary with both loads ahead off ($PROSCENIUM_GPU_DN_AHEAD=0 PROSCENIUM_GPU_MOE_DOWN_AHEAD=0: session 24's
# launches), while serve --ui loads a full-size checkpoint: the take (B = 1, 4; six takes, two rounds), the step
# (B = 1…8) and the tower twice, the A/B of the step and of the take twice each, alternating (the codes' digests
# must be the same), the prefill, the voices, the codec, exact's take; then the product through serve (a new
# 10 s voice and requests in it, four concurrent requests, the studio's service). Carried: .carry-fa and .carry-fb.
set -u
. docs/perf/run-lib.sh
run_setup run5 420 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
OFF="env PROSCENIUM_GPU_DN_AHEAD=0 PROSCENIUM_GPU_MOE_DOWN_AHEAD=0"
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
T 45 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
for i in 1 2; do T 10 rows-off-$i $OFF $P $BB; T 10 rows-$i $P $BB; done
T 6 tower $P bench-tower -synthetic full -rows 1,2,4,8
T 6 tower2 $P bench-tower -synthetic full -rows 1,2,4,8
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do T 25 take-off-$i $OFF $P $TK; T 25 take-on-$i $P $TK; done
T 12 prefill1 $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
T 20 codec $P bench-codec -synthetic s2 -stages -repeats 3
T 25 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics exact
wait $LOADER
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
T 25 connected1 python3 docs/perf/h200-lead9-concurrent.py 18100 4
T 40 studio python3 docs/perf/h200-lead12-studio.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
run_pack
run_tally
echo "-- codec"; grep -hE "streaming|first frame|whole decode|digest" $O/codec.log | sed 's/  */ /g'
for f in take take-exact; do echo "-- $f"; grep -hE "^take|takes after|first audio  |  frame  |  codec  |batch [14]|  loop|backbone step" $O/$f.log | cut -c1-200; done
for f in rows-off-1 rows-1 rows-off-2 rows-2; do echo "-- $f"; grep -hE "^B =" $O/$f.log | cut -c1-100; done; grep -h "^takes" $O/tower.log $O/tower2.log | cut -c1-110
for i in 1 2; do for v in off on; do echo "-- take $v $i"; grep -hE "^take  |batch [14]" $O/take-$v-$i.log | cut -c1-150; grep -h 'batch 4' $O/take-$v-$i.log | grep -o 'codes.*'; done; done
echo "-- prefill1"; grep -E '^(60|300|700) ' $O/prefill1.log | cut -c1-40
for f in ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache" $O/$f.log | cut -c1-160; done
echo "-- product"; cat $O/load.log | cut -c1-120; tail -n 6 $O/product.log; tail -n 5 $O/connected1.log; tail -n 6 $O/studio.log | cut -c1-330
