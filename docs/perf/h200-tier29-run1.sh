#!/bin/bash
# tier29, run 1: memory tiers with the token embedding and LM head in host memory and the
# last layer's experts on the prefill stage (branch tier29). Run from the root of a copy of
# /work/main: bash .carry-tier29/run.sh
set -u
ROOT=$PWD; X=/tmp/tier29; O=/tmp/tier29-out; mkdir -p $X $O
tar xJf $ROOT/.carry-tier29/bundle.tar.xz -C $X
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
G=$X/proscenium-gpu
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; cat $X/commit.txt; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; free -g; } > $O/machine.txt 2>&1
# 1. the 30 GiB and 22 GiB caps (issue 29's figures)
T 45 bench-take-cap30 $G bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap 32212254720
T 50 bench-take-cap22 $G bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap 23622320128
# 2. same codes at every cap: the demo checkpoint's GPU takes against the CPU's (exact: bit for bit)
$G make-tiny -tokenizer $X/tokenizer.json -geometry demo /tmp/ck-demo > $O/make-tiny.log 2>&1
DT="$G debug-take -model /tmp/ck-demo -baseline 0 -seeds 10 -forced-frames 30"
T 25 dt-uncapped $DT -numerics exact -cap 1099511627776 -out $O/dt-uncapped.json
caps=$(python3 -c "
import json;m=json.load(open('$O/dt-uncapped.json'))['tier_model'];L=m['layer_expert_bytes'];n=m['layers']
least=m['model_bytes']-n*L-m['host_dense_bytes']+L
print(m['model_bytes']-1, least+2*L, least)" 2>>$O/steps.log)
for c in $caps; do T 25 dt-exact-$c $DT -numerics exact -cap $c -out $O/dt-exact-$c.json; done
last=$(echo $caps | awk '{print $NF}')
T 25 dt-fast-uncapped $DT -numerics fast -cap 1099511627776 -out $O/dt-fast-uncapped.json
T 25 dt-fast-$last $DT -numerics fast -cap $last -out $O/dt-fast-$last.json
# 3. B takes together under the 30 GiB cap
T 60 bench-take-cap30-batch $G bench-take -synthetic full -prompt 60 -frames 200 -takes 1 -cap 32212254720 -batch 1,2,4
(cd /tmp && tar czf $OUT/tier29.tgz tier29-out)
echo "== steps"; grep -E "^rc=" $O/steps.log | tr '\n' ' '; echo
for f in $O/bench-take-cap*.log; do echo "-- $(basename $f)"; grep -hE "real-time|first audio|  frame|backbone step|memory|experts|hit rate|bus|tier plan|batch|refused|rror|panic" $f | head -16; done
for f in $O/dt-*.json; do python3 -c "
import json;r=json.load(open('$f'));x=r.get('experts') or {};fr=r['free_running']
print('$(basename $f)', r['numerics'], 'cap', r.get('cap_bytes'), '|', x.get('tier'), x.get('device_layers'), '/', x.get('layers'), 'bus', x.get('bus_bytes_per_frame'), '| identical', fr['identical_takes'], '/', fr['seeds'], 'div', [(d['seed'],d['frame'],d['codebook']) for d in fr['divergences']], '| forced worst', r['teacher_forced']['worst_relative_error'])" 2>&1 | tail -1; done
grep -hE "rror|panic" $O/dt-*.log | head -5
