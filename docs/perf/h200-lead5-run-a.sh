#!/bin/bash
# Lead's merged run, part A (session 5): device tests under both numerics policies, benches
# (fast/exact, voice cache, memory tiers), debug-take agreement. Binaries stay in .carry-x for B.
set -u
TAG=${1:-a}; ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/$TAG; mkdir -p $O $X
(cd $X && tar xJf $ROOT/.carry-a/bundle.tar.xz)
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv; free -g; } > $O/machine.txt 2>&1
for g in demo odd; do $X/proscenium-gpu make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
T 60 kernels-test $X/kernels.test -test.v
T 150 tests-backbone-exact $X/cuda.test -test.v -test.run 'TestBackbone|TestTowerFrames'
PROSCENIUM_TEST_NUMERICS=fast T 150 tests-backbone-fast $X/cuda.test -test.v -test.run 'TestBackbone|TestTowerFrames|TestMixerStepGraph|TestDeltaNetLayer|TestAttentionLayer'
T 200 tests-other $X/cuda.test -test.v -test.short -test.run 'Test[^B]'
for n in fast exact; do
  T 60 bench-backbone-$n $X/proscenium-gpu bench-backbone --synthetic full --json -numerics $n
  T 60 bench-take-$n $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics $n
done
T 45 bench-tower-fast $X/proscenium-gpu bench-tower -synthetic full -numerics fast
for r in 10 30; do T 60 bench-take-ref$r $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds $r; done
for cap in 32212254720 23622320128; do T 120 bench-take-cap$cap $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap $cap; done
T 60 debug-take-demo-exact $X/proscenium-gpu debug-take -model /tmp/ck-demo -baseline 0 -numerics exact -out $O/take-demo-exact.json
T 60 debug-take-odd-exact $X/proscenium-gpu debug-take -model /tmp/ck-odd -baseline 0 -numerics exact -out $O/take-odd-exact.json
T 120 debug-take-demo100-fast $X/proscenium-gpu debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -numerics fast -out $O/take-demo100-fast.json
T 60 debug-take-odd-fast $X/proscenium-gpu debug-take -model /tmp/ck-odd -baseline 2 -numerics fast -out $O/take-odd-fast.json
(cd /tmp && tar czf $OUT/$TAG.tgz $TAG)
echo "== steps"; grep -E "^rc=" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|    --- FAIL|^FAIL:|panic" $O/*.log | head -30
for n in fast exact; do python3 -c "
import json;r=json.load(open('$O/bench-backbone-$n.log'));print('$n step dev %.3f ms, prefill %.2f ms, %.0f GB/s (%.0f%% copy)'%(r['step_device_ms'],r['prefill_ms'],r['step_gb_per_s'],100*r['copy_share']))" 2>&1 | tail -1; grep -hE "real-time|first audio|  frame |backbone step|memory" $O/bench-take-$n.log; done
grep -hE "graph" $O/bench-tower-fast.log | head -3
for f in $O/bench-take-ref*.log $O/bench-take-cap*.log; do echo "-- $(basename $f)"; grep -hE "real-time|first audio|uncached|from the cache|experts|hit|bus|prefill|memory|refused|rror" $f | head -9; done
for g in demo-exact odd-exact demo100-fast odd-fast; do python3 -c "
import json;r=json.load(open('$O/take-$g.json'));f=r['teacher_forced'];fr=r['free_running']
print('$g forced worst', f['worst_relative_error'], '| free identical', fr['identical_takes'], '/', fr['seeds'])" 2>&1 | tail -1; done
