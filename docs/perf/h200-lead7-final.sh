#!/bin/bash
# Lead's final run, session 7, on merged main (one call): the decode-step kernels' tests first —
# if they fail, every later step runs on the binaries of main before step27b's merge (.carry-fn) —
# then the helpers' handed-over scripts (gemm28, tier29b, joint30, mixers28), the device tests
# under -test.short, the take benches, and the product through serve --batch 4 if time is left.
# Carried: .carry-fa (h200-lead6-build.sh's bundle of HEAD, unpack.sh = h200-lead6-unpack.sh),
# .carry-fn (the same bundle of main before step27b), .carry-fb (the CLI and its libraries).
# Run from the checkout's root; BUDGET_S bounds the whole run. Logs: $OUT/final7.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; XN=$ROOT/.carry-xn; O=/tmp/final7; rm -rf $O; mkdir -p $O/h $X $XN
START=$(date +%s); END=$(( START + ${BUDGET_S:-430} ))
for c in fa fb; do bash .carry-fa/unpack.sh .carry-$c $X >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }; done
bash .carry-fa/unpack.sh .carry-fn $XN >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json; cp $X/tokenizer.json $XN/
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV), fallback $(cat .carry-fn/REV)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
OUT=$O/h T 45 helper-step27b bash docs/perf/h200-step27b.sh $X
E=/tmp/step27b-final/tests-exact.log
if [ -f $E ] && grep -q -- '--- PASS: TestBackboneMatchesCPU' $E && ! grep -q -- '--- FAIL' $E; then echo "binaries: HEAD $(cat .carry-fa/REV)" >> $O/steps.log
else X=$XN; echo "binaries: FALLBACK $(cat .carry-fn/REV) (step27b's exact tests failed)" >> $O/steps.log; fi
export PROSCENIUM_GPU_WORKER=$X/proscenium-gpu
OUT=$O/h T 44 helper-gemm28 bash docs/perf/h200-gemm28-final.sh $X
T 50 helper-tier29b bash docs/perf/h200-tier29b-lead.sh $X $O/h/tier29b
T 44 helper-joint30 bash docs/perf/h200-joint30-lead.sh $X $O/h/joint30
T 46 helper-mixers28 bash docs/perf/h200-mixers28-lead.sh $X $O/h/mixers28
T 34 bench-cap30-batch $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -cap 32212254720 -batch 1,4
T 22 bench-take $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -numerics fast
T 18 bench-take-exact $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -numerics exact
(cd $ROOT/engine/cuda && T 95 tests-short $X/cuda.test -test.v -test.short -test.run 'Test[^B]')
cp -r /tmp/step27b-final $O/h/ 2>/dev/null
(cd /tmp && tar czf $OUT/final7.tgz final7)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped|binaries)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -rhE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" $O --include=*.log | sort | uniq -c | head -20
echo "== tests-short: $(grep -c -- '--- PASS' $O/tests-short.log) pass, $(grep -c -- '--- FAIL' $O/tests-short.log) fail"
for h in step27b gemm28 tier29b joint30 mixers28; do echo "==== $h"; tail -c 1700 $O/helper-$h.log; done
for f in bench-take bench-take-exact bench-cap30-batch; do echo "-- $f"; grep -hE "real-time|first audio|backbone step|prefill|launches|^batch|expert cache|hit rate" $O/$f.log | head -9; done
