#!/bin/bash
# The expert cache (issue 29, tier29b) on merged binaries, ≤ 120 s on an H200: the figures docs/PERF.md
# "Expert cache, session 7 (tier29b)" quotes. Run from the repository root:
#   bash docs/perf/h200-tier29b-lead.sh BINDIR [OUTDIR]
# BINDIR has proscenium-gpu (cuda build), proscenium-gpu.test and cuda.test (go test -tags cuda -c of
# ./cmd/proscenium-gpu and ./engine/cuda).
set -u
B=${1:?usage: h200-tier29b-lead.sh BINDIR [OUTDIR]}; O=${2:-/tmp/tier29b-lead}; mkdir -p $O
G=$B/proscenium-gpu
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
# 1. the kernels through the table; same codes at every cap with the cache on; a forced hot set
T 20 cuda-test $B/cuda.test -test.v -test.run '^(TestExpertTable|TestMoEDown|TestMoEDownRowsMatchesOneRow|TestFusedDownCombine)$'
T 40 gpu-test $B/proscenium-gpu.test -test.v -test.run '^(TestCUDAExpertCacheHotSet|TestCUDAEngineTiers)$'
# 2. the caps that mimic 32 GB and 24 GB cards (synthetic routing is near uniform: the worst case for a cache)
T 30 bench-cap30 $G bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap 32212254720
T 35 bench-cap22 $G bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap 23622320128
echo "== steps"; grep -E "^rc=" $O/steps.log | tr '\n' ' '; echo
grep -hE "^\s*(--- |ok|FAIL|PASS|panic)|last take" $O/cuda-test.log $O/gpu-test.log 2>/dev/null | cut -c1-300 | head -30
for f in $O/bench-*.log; do echo "-- $(basename $f)"; grep -hE "real-time|first audio|experts|hit rate|bus|cache|rror|panic" $f | head -14; done
