#!/bin/bash
# Lead, session 24, run 1 (one call, ≤ 220 s): where a frame of four takes goes beyond its graphs (4.68 ms a
# frame in the round against 4.24 of step and tower graphs alone). The take of 1 and 4 with the audio decoded and
# not (-decode=false: silence on the host, the codec idle), alternating twice, each round's loop split into Step
# and the takes' handling; the take with 64-frame chunks; the codec's stages at a chunk (S2 geometry); ncu of the
# current four-row step (each kernel alone). Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 220 .carry-fa
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do for v in true false; do
	T 30 take-$v-$i $P $TK -decode=$v
done; done
T 30 take-c64 $P $TK -chunk-max 64
T 25 codec $P bench-codec -synthetic s2 -stages -repeats 3
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
S="--clock-control none --profile-from-start off --graph-profiling node --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum"
T 45 ncu-rows4 $NCU $S $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
run_pack
run_tally
for i in 1 2; do for v in true false; do echo "-- take $v $i"; grep -hE "^take  |batch [14]|  loop" $O/take-$v-$i.log | cut -c1-200; done; done
echo "-- take c64"; grep -hE "^take  |batch [14]|  loop|codec  " $O/take-c64.log | cut -c1-200
echo "-- codec"; tail -n 40 $O/codec.log | cut -c1-160
echo "-- ncu-rows4"; python3 docs/perf/ncu-agg.py $O/ncu-rows4.log 2>&1 | head -30
