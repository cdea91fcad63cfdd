#!/bin/bash
# fast27's device run: the numerics policy (fast default, exact = the contract) on the H200.
# Both policies: the device tests (exact asserts the CPU's bits; fast its tolerances),
# bench backbone / tower / take, debug-take agreement with the CPU on the demo and odd
# checkpoints. Carried: .carry-fast27/{cuda.test,proscenium-gpu} (stripped, kernels sm_90).
set -u
ROOT=$PWD; C=$ROOT/.carry-fast27; O=/tmp/f27; mkdir -p $O
(cd $C && tar xJf bundle.tar.xz)
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $C/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$C/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv; } > $O/machine.txt 2>&1
for g in demo odd; do $C/proscenium-gpu make-tiny -tokenizer $C/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
for n in fast exact; do
  T 60 bench-backbone-$n $C/proscenium-gpu bench-backbone --synthetic full --json -numerics $n
  T 60 bench-tower-$n $C/proscenium-gpu bench-tower -synthetic full -numerics $n
  T 60 bench-take-$n $C/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics $n
done
T 90 debug-take-demo-fast $C/proscenium-gpu debug-take -model /tmp/ck-demo -numerics fast -out $O/take-demo-fast.json
T 90 debug-take-odd-fast $C/proscenium-gpu debug-take -model /tmp/ck-odd -numerics fast -out $O/take-odd-fast.json
T 60 debug-take-demo-exact $C/proscenium-gpu debug-take -model /tmp/ck-demo -baseline 0 -numerics exact -out $O/take-demo-exact.json
T 60 debug-take-odd-exact $C/proscenium-gpu debug-take -model /tmp/ck-odd -baseline 0 -numerics exact -out $O/take-odd-exact.json
T 90 tests-backbone-exact $C/cuda.test -test.v -test.run 'TestBackbone|TestTowerFrames'
PROSCENIUM_TEST_NUMERICS=fast T 90 tests-backbone-fast $C/cuda.test -test.v -test.run 'TestBackbone|TestTowerFrames'
T 150 tests-other $C/cuda.test -test.v -test.short -test.run 'Test[^B]'
T 90 debug-take-demo100-fast $C/proscenium-gpu debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -numerics fast -out $O/take-demo100-fast.json
(cd /tmp && tar czf $OUT/f27.tgz f27)
cp $O/steps.log $O/bench-*.log $OUT/ 2>/dev/null
echo "== steps"; grep -E "^rc=" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|    --- FAIL" $O/tests-*.log | head -30
echo "== bits under exact (nonzero)"; grep -hE "differ from the CPU|bits:" $O/tests-backbone-exact.log | grep -v " 0/\|: 0 of" | head -10
echo "== backbone fast vs CPU"; grep -hE "vs CPU: worst" $O/tests-backbone-fast.log | sed 's/;.*bits:/ bits:/' | head -12
for n in fast exact; do echo "== $n"; python3 -c "
import json;r=json.load(open('$O/bench-backbone-$n.log'));print('step dev %.3f ms wall %.3f, prefill %.2f ms, GB/s %.0f (%.0f%% copy), noMoE %.3f noMix %.3f'%(r['step_device_ms'],r['step_ms'],r['prefill_ms'],r.get('step_gb_per_s',0),100*r.get('copy_share',0),r['step_without_moe_ms'],r['step_without_mixers_ms']))" 2>&1 | head -3
grep -hE "^frame \(|frame, top|after" $O/bench-tower-$n.log | head -3; grep -hE "real-time|first audio|  frame|backbone step|memory" $O/bench-take-$n.log | head -8; done
for g in demo-fast odd-fast demo-exact odd-exact demo100-fast; do python3 -c "
import json;r=json.load(open('$O/take-$g.json'));f=r['teacher_forced'];fr=r['free_running'];b=r.get('cpu_rounding_baseline') or []
print('$g', r.get('numerics'), 'forced worst', f['worst_relative_error'], 'bits', f.get('bit_identical_by_codebook'), '| free identical', fr['identical_takes'], '/', fr['seeds'], '| baseline (CPU vs rounded CPU)', [(x['identical_takes'],x['seeds']) for x in b])
[print('   ', d) for d in fr['divergences'][:6]]" 2>&1 | head -10; done
