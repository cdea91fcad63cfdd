#!/bin/bash
# Lead's final run: every device test, the benchmarks, the CPU agreement with its rounding baseline,
# voices on the GPU, serve checks. Logs tarred into $OUT/r3.tgz; a summary on stdout.
set -u
ROOT=$PWD; C=$ROOT/.carry; O=/tmp/r3; mkdir -p $O
cd $C && tar xJf bundle.tar.xz && cd $ROOT
cp kernels/servecheck.py kernels/run-serve-checks.sh $C/
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $C/tokenizer.json
export LD_LIBRARY_PATH=$C/lib PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$C/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_GPU_WORKER=$C/proscenium-gpu
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
T 150 tests-backbone $C/cuda.test -test.v -test.run 'TestBackbone'
T 200 tests-other $C/cuda.test -test.v -test.short -test.run 'Test[^B]'
T 90 bench-backbone $C/proscenium-gpu bench-backbone --synthetic full --json
T 60 bench-tower $C/proscenium-gpu bench-tower -synthetic full
T 60 bench-take $C/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 3
T 60 bench-take-json $C/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -json
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] && T 120 ncu-prefill "$NCU" --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv $C/proscenium-gpu bench-backbone -synthetic full -profile-prefill
python3 docs/perf/ncu-summary.py $O/ncu-prefill.log > $O/ncu-prefill-summary.md 2>&1
for g in demo odd; do
  $C/proscenium-gpu make-tiny -tokenizer $C/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null
  T 150 debug-take-$g $C/proscenium-gpu debug-take -model /tmp/ck-$g -baseline 2 -out $O/take-$g.json
done
T 100 take-checks bash $C/run-take-checks.sh /tmp/tc
cp /tmp/tc/take-checks.log $O/take-checks-out.log 2>/dev/null
T 120 serve-checks bash $C/run-serve-checks.sh /tmp/serve $ROOT/engine/audio/decode/testdata/ref.wav
cp /tmp/serve/serve-checks.log $O/serve-checks-out.log 2>/dev/null
(cd /tmp && tar czf $OUT/r3.tgz r3)
grep -E "^rc=" $O/steps.log | tr '\n' ' '; echo
grep -hE "^(--- FAIL|FAIL|ok )|--- FAIL" $O/tests-*.log | head -30
grep -h -E "prefill|step|first audio|real-time|frame|memory|admitted|graph|draw" $O/bench-*.log | head -40
for g in demo odd; do python3 -c "import json;r=json.load(open('$O/take-$g.json'));f=r['teacher_forced'];fr=r['free_running'];print('$g','forced worst',f['worst_relative_error'],'over',f['vectors_over_tolerance'],'| free identical',fr['identical_takes'],'/',fr['seeds'],'pipeline_differs',fr['pipeline_differs'],'| cpu rounding baseline',[b['identical_takes'] for b in r.get('cpu_rounding_baseline',[])]);[print('  ',d) for d in fr['divergences']]"; done
grep -E "identical|rc=|want|worker pid|died|codes ==" $O/take-checks-out.log | head -20
cat $O/serve-checks-out.log | tail -12
head -14 $O/ncu-prefill-summary.md
