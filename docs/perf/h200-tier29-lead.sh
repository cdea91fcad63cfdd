#!/bin/bash
# Memory tiers (issue 29) on merged binaries, ≤ 120 s on an H200: the figures docs/PERF.md
# "Memory tiers, session 6 (tier29)" quotes. Run from the repository root:
#   bash docs/perf/h200-tier29-lead.sh BINDIR [OUTDIR]
# BINDIR has proscenium-gpu (cuda build) and optionally proscenium-gpu.test and cuda.test
# (go test -tags cuda -c of ./cmd/proscenium-gpu and ./engine/cuda).
set -u
B=${1:?usage: h200-tier29-lead.sh BINDIR [OUTDIR]}; O=${2:-/tmp/tier29-lead}; mkdir -p $O
G=$B/proscenium-gpu
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
# 1. the caps that mimic 32 GB and 24 GB cards
T 35 bench-take-cap30 $G bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap 32212254720
T 40 bench-take-cap22 $G bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap 23622320128
# 2. same codes at every cap: the demo checkpoint's GPU takes against the CPU's, exact
$G make-tiny -tokenizer $O/tokenizer.json -geometry demo $O/ck-demo > $O/make-tiny.log 2>&1
DT="$G debug-take -model $O/ck-demo -baseline 0 -seeds 10 -forced-frames 30 -numerics exact"
T 15 dt-uncapped $DT -cap 1099511627776 -out $O/dt-uncapped.json
caps=$(python3 -c "
import json;m=json.load(open('$O/dt-uncapped.json'))['tier_model'];L=m['layer_expert_bytes'];n=m['layers']
least=m['model_bytes']-n*L-m['host_dense_bytes']+L
print(m['model_bytes']-1, least+L, least)" 2>>$O/steps.log)
for c in $caps; do T 15 dt-exact-$c $DT -cap $c -out $O/dt-exact-$c.json; done
# 3. B takes under the 30 GiB cap (batched: one B-row step a frame where the build has TakeFrames)
T 30 bench-take-cap30-batch $G bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -cap 32212254720 -batch 1,2,4
# 4. the Go tests where the binaries are there
[ -x $B/proscenium-gpu.test ] && T 30 test-tiers $B/proscenium-gpu.test -test.v -test.run 'TestCUDAEngineTiers'
[ -x $B/cuda.test ] && T 30 test-codec-bytes $B/cuda.test -test.v -test.short -test.run 'TestCodecBytes|TestPlanTier|TestWeightLayoutTier'
echo "== steps"; grep -E "^rc=" $O/steps.log | tr '\n' ' '; echo
for f in $O/bench-take-cap*.log; do echo "-- $(basename $f)"; grep -hE "real-time|first audio|  frame|  codec|backbone step|memory|experts|hit rate|bus|tier plan|codec  |batch|rror|panic" $f | head -18; done
for f in $O/dt-*.json; do python3 -c "
import json;r=json.load(open('$f'));x=r.get('experts') or {};fr=r['free_running']
print('$(basename $f)', 'cap', r.get('cap_bytes'), '|', x.get('tier'), x.get('device_layers'), '/', x.get('layers'), '| identical to the CPU', fr['identical_takes'], '/', fr['seeds'], '| forced worst', r['teacher_forced']['worst_relative_error'])" 2>&1 | tail -1; done
grep -hE "^(--- |ok|FAIL|PASS)|codec.*held" $O/test-*.log 2>/dev/null | head -20
