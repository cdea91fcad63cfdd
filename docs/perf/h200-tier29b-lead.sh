#!/bin/bash
# The expert cache (issue 29, tier29b) on merged binaries, ≤ 45 s on an H200: the 22 GiB cap's figures
# under near-uniform synthetic routing (the worst case for a cache; the 30 GiB cap and the forced hot
# set were measured in tier29b's run 1), then the kernels through the table and the forced hot set's
# codes. Run from the repository root:
#   bash docs/perf/h200-tier29b-lead.sh BINDIR [OUTDIR]
# BINDIR has proscenium-gpu (cuda build), and optionally cuda.test and proscenium-gpu.test
# (go test -tags cuda -c of ./engine/cuda and ./cmd/proscenium-gpu).
set -u
B=${1:?usage: h200-tier29b-lead.sh BINDIR [OUTDIR]}; O=${2:-/tmp/tier29b-lead}; mkdir -p $O
G=$B/proscenium-gpu
START=$(date +%s)
left() { echo $((44 - ($(date +%s) - START))); }
T() { local s=$1; shift; local n=$1; shift; local l; l=$(left); [ $l -lt 4 ] && { echo "skip $n" >> $O/steps.log; return; }
  [ $s -gt $l ] && s=$l; echo "== $(date -u +%T) $n (limit $s s)" >> $O/steps.log
  timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
# 1. the 22 GiB cap (a 24 GB card): about 35 s (18 s of it the load, 15.8 GiB pinned)
T 37 bench-cap22 $G bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap 23622320128
# 2. what is left: the four expert kernels through a permuted table against the packed layout, and
#    a forced hot set promoted and served from the device with the uncapped engine's codes
[ -x $B/cuda.test ] && T 4 test-table $B/cuda.test -test.v -test.run '^TestExpertTable$'
[ -x $B/proscenium-gpu.test ] && T 8 test-hot-set $B/proscenium-gpu.test -test.v -test.run '^TestCUDAExpertCacheHotSet$'
echo "== tier29b steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
grep -hE "real-time|first audio|backbone step|experts|hit rate|bus|cache|take [0-9]|rror|panic|loaded" $O/bench-cap22.log | head -14
grep -hE "^\s*(--- |ok|FAIL|PASS|panic)|last take" $O/test-*.log 2>/dev/null | cut -c1-300 | head -12
