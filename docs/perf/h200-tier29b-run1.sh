#!/bin/bash
# tier29b, device window 1 (≤ 120 s): the expert cache (issue 29). Run from the root of a copy of
# /work/main: bash .carry-tier29b/run.sh. Logs into $OUT/tier29b.tgz.
set -u
ROOT=$PWD; C=$ROOT/.carry-tier29b; X=/tmp/tier29b; O=/tmp/tier29b-out; mkdir -p $X $O
START=$(date +%s)
bash docs/perf/h200-lead6-unpack.sh $C $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 1; }
G=$X/proscenium-gpu
left() { echo $((105 - ($(date +%s) - START))); }
T() { local s=$1; shift; local n=$1; shift; local l; l=$(left); [ $l -lt 8 ] && { echo "skip $n" >> $O/steps.log; return; }
  [ $s -gt $l ] && s=$l; echo "== $(date -u +%T) $n (limit $s s)" >> $O/steps.log
  timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; cat $C/REV; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; free -g; } > $O/machine.txt 2>&1
# 1. kernels: the table's addressing and counters against the packed layout; the kernels it touched
T 20 cuda-test $X/cuda.test -test.v -test.run '^(TestExpertTable|TestMoEDown|TestMoEDownRowsMatchesOneRow|TestFusedDownCombine|TestFusedStep|TestGemvFP8|TestGemvBF16)$'
# 2. same codes at every cap with the cache on; a forced hot set promoted and served from the device
T 45 gpu-test $X/proscenium-gpu.test -test.v -test.run '^(TestCUDAExpertCacheHotSet|TestCUDAEngineTiers)$'
# (the fused step's down-combine kernel through the table)
T 15 gpu-test-fused env PROSCENIUM_GPU_FUSED=1 $X/proscenium-gpu.test -test.v -test.run '^TestCUDAExpertCacheHotSet$/^fast$'
# 3. figures: 30 GiB (uniform: the worst case), 22 GiB with a forced hot set (the best)
T 30 bench-cap30 $G bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap 32212254720
T 35 bench-cap22-hot $G bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap 23622320128 -hot-experts
(cd /tmp && tar czf $OUT/tier29b.tgz tier29b-out)
echo "== steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
grep -hE "^\s*(--- |ok|FAIL|PASS|panic)|hit rate|promotions|cache|second take" $O/cuda-test.log $O/gpu-test*.log 2>/dev/null | cut -c1-400 | head -50
for f in $O/bench-*.log; do echo "-- $(basename $f)"; grep -hE "real-time|first audio|backbone step|memory|experts|hit rate|bus|cache|tier plan|rror|panic|loaded" $f | head -16; done
