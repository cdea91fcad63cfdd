#!/bin/bash
# fast27's second device run: attention and the split DeltaNet step under the numerics
# policy too. Their kernel tests under both policies, the backbone/tower tests under fast,
# bench backbone (fast, exact) and take (fast), debug-take on demo and odd under fast.
set -u
ROOT=$PWD; C=$ROOT/.carry-fast27; O=/tmp/f27b; mkdir -p $O
(cd $C && tar xJf bundle.tar.xz)
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $C/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$C/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
for g in demo odd; do $C/proscenium-gpu make-tiny -tokenizer $C/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
T 60 bench-backbone-fast $C/proscenium-gpu bench-backbone --synthetic full --json -numerics fast
T 60 bench-backbone-exact $C/proscenium-gpu bench-backbone --synthetic full --json -numerics exact
T 60 bench-take-fast $C/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast
T 60 tests-mixers $C/cuda.test -test.v -test.run 'TestAttention|TestDeltaNet|TestMixerStepGraph|TestMoE|TestRMSNorm|TestBackboneRows'
PROSCENIUM_TEST_NUMERICS=fast T 60 tests-backbone-fast $C/cuda.test -test.v -test.run 'TestBackbone|TestTowerFrames|TestMixerStepGraph|TestDeltaNetLayer|TestAttentionLayer'
T 60 tests-backbone-exact $C/cuda.test -test.v -test.run 'TestBackboneMatchesCPU'
T 60 debug-take-demo-fast $C/proscenium-gpu debug-take -model /tmp/ck-demo -baseline 0 -numerics fast -out $O/take-demo-fast.json
T 60 debug-take-odd-fast $C/proscenium-gpu debug-take -model /tmp/ck-odd -baseline 0 -numerics fast -out $O/take-odd-fast.json
(cd /tmp && tar czf $OUT/f27b.tgz f27b)
cp $O/steps.log $O/bench-*.log $OUT/ 2>/dev/null
echo "== steps"; grep -E "^rc=" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|    --- FAIL" $O/tests-*.log | head -30
echo "== bits under exact (nonzero, vs CPU)"; grep -hE "differ from the CPU|bits:" $O/tests-backbone-exact.log $O/tests-mixers.log | grep -v "fast numerics" | grep -v " 0/\|: 0 of\|as prefill vs as steps" | head -10
echo "== fast tolerances"; grep -hE "fast numerics|vs CPU: worst" $O/tests-mixers.log $O/tests-backbone-fast.log | grep -E "relative error|worst row" | sed 's/;.*bits:/ bits:/' | sort | uniq | head -24
for n in fast exact; do python3 -c "
import json;r=json.load(open('$O/bench-backbone-$n.log'));print('$n step dev %.3f ms (variants %s), prefill %.2f ms, %.0f GB/s (%.0f%% copy), noMoE %.3f noMix %.3f'%(r['step_device_ms'],[(v['deltanet_step'],round(v['step_device_ms'],3)) for v in r['step_variants']],r['prefill_ms'],r['step_gb_per_s'],100*r['copy_share'],r['step_without_moe_ms'],r['step_without_mixers_ms']))" 2>&1 | tail -1; done
grep -hE "real-time|first audio|  frame|backbone step" $O/bench-take-fast.log
for g in demo-fast odd-fast; do python3 -c "
import json;r=json.load(open('$O/take-$g.json'));f=r['teacher_forced'];fr=r['free_running']
print('$g forced worst', f['worst_relative_error'], 'over tol', f['vectors_over_tolerance'], '| free identical', fr['identical_takes'], '/', fr['seeds'])
[print('   ', d) for d in fr['divergences'][:6]]" 2>&1 | tail -7; done
