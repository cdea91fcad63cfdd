#!/bin/bash
# tier29b, device window 2 (≤ 60 s): the expert cache's remaining figures (issue 29): the 22 GiB cap
# under near-uniform synthetic routing (the worst case for a cache), and four takes in one B-row step
# under the 30 GiB cap. Run from the root of a copy of /work/main: bash .carry-tier29b/run.sh.
set -u
ROOT=$PWD; C=$ROOT/.carry-tier29b; X=/tmp/tier29b; O=/tmp/tier29b-out2; mkdir -p $X $O
START=$(date +%s)
bash docs/perf/h200-lead6-unpack.sh $C $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 1; }
G=$X/proscenium-gpu
left() { echo $((56 - ($(date +%s) - START))); }
T() { local s=$1; shift; local n=$1; shift; local l; l=$(left); [ $l -lt 8 ] && { echo "skip $n" >> $O/steps.log; return; }
  [ $s -gt $l ] && s=$l; echo "== $(date -u +%T) $n (limit $s s)" >> $O/steps.log
  timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; cat $C/REV; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
T 31 bench-cap22 $G bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap 23622320128
T 24 bench-cap30-b4 $G bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -cap 32212254720 -batch 4
(cd /tmp && tar czf $OUT/tier29b.tgz tier29b-out2)
echo "== steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
for f in $O/bench-*.log; do echo "-- $(basename $f)"; grep -hE "real-time|first audio|backbone step|batch|experts|hit rate|bus|cache|take [0-9]|rror|panic|loaded" $f | head -16; done
