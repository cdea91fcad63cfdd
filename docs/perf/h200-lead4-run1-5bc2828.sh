#!/bin/bash
# Lead's run on main with the numerics contract merged: every device test, the benchmarks,
# debug-take agreement (demo 20 + 100 seeds, odd 20), take and serve checks.
set -u
ROOT=$PWD; C=$ROOT/.carry-lead; O=/tmp/r1; mkdir -p $O
cd $C && tar xJf bundle.tar.xz && cd $ROOT
cp kernels/servecheck.py kernels/run-serve-checks.sh kernels/run-take-checks.sh $C/
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $C/tokenizer.json
export LD_LIBRARY_PATH=$C/lib PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$C/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_GPU_WORKER=$C/proscenium-gpu
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
for g in demo odd; do $C/proscenium-gpu make-tiny -tokenizer $C/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
T 120 debug-take-demo $C/proscenium-gpu debug-take -model /tmp/ck-demo -baseline 0 -out $O/take-demo.json
T 120 debug-take-odd $C/proscenium-gpu debug-take -model /tmp/ck-odd -baseline 0 -out $O/take-odd.json
T 150 tests-backbone $C/cuda.test -test.v -test.run 'TestBackbone'
T 240 tests-other $C/cuda.test -test.v -test.short -test.run 'Test[^B]'
T 90 bench-backbone $C/proscenium-gpu bench-backbone --synthetic full --json
T 60 bench-tower $C/proscenium-gpu bench-tower -synthetic full
T 60 bench-take $C/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 3
T 150 debug-take-demo100 $C/proscenium-gpu debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -out $O/take-demo100.json
T 100 take-checks bash $C/run-take-checks.sh /tmp/tc
cp /tmp/tc/take-checks.log $O/take-checks-out.log 2>/dev/null
T 120 serve-checks bash $C/run-serve-checks.sh /tmp/serve $ROOT/engine/audio/decode/testdata/ref.wav
cp /tmp/serve/serve-checks.log $O/serve-checks-out.log 2>/dev/null
(cd /tmp && tar czf $OUT/r1.tgz r1)
grep -E "^rc=" $O/steps.log | tr '\n' ' '; echo
grep -hE "^(--- FAIL|FAIL|ok )|--- FAIL|differ from the CPU|bits:" $O/tests-*.log | grep -v " 0/" | head -40
grep -h -E "prefill|step|first audio|real-time|frame|memory|admitted|graph|draw" $O/bench-*.log | head -40
for g in demo odd demo100; do python3 -c "import json;r=json.load(open('$O/take-$g.json'));f=r['teacher_forced'];fr=r['free_running'];print('$g','forced worst',f['worst_relative_error'],'bits',f.get('bit_identical_by_codebook'),'of',f['frames'],'| free identical',fr['identical_takes'],'/',fr['seeds'],'pipeline_differs',fr['pipeline_differs']);[print('  ',d) for d in fr['divergences']]" 2>&1 | head -20; done
grep -E "identical|rc=|want|worker pid|died|codes ==" $O/take-checks-out.log | head -20
tail -12 $O/serve-checks-out.log
