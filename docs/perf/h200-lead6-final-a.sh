#!/bin/bash
# As carried: .carry-fa/ held this script, h200-lead6-unpack.sh as unpack.sh, the bundle that
# h200-lead6-build.sh packs, and a copy of h200-tier29-lead.sh without its debug-take caps.
# Lead's final run, part A (session 6): every device test under both policies on merged main,
# then the helpers' handed-over scripts (B-row step, several takes, tiers, prefill) and the
# take benches. Carry .carry-fa; run from the checkout's root. Logs: $OUT/final-a.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/final-a; rm -rf $O; mkdir -p $O $X
bash .carry-fa/unpack.sh .carry-fa $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + ${BUDGET_S:-480} ))  # steps in priority order; a step gets what is left
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; cat .carry-fa/REV; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
cd $ROOT/engine/cuda
T 60 tests-backbone-exact $X/cuda.test -test.v -test.run 'TestBackbone|TestTowerFrames'
PROSCENIUM_TEST_NUMERICS=fast T 60 tests-backbone-fast $X/cuda.test -test.v -test.run 'TestBackbone|TestTowerFrames|TestMixerStepGraph|TestDeltaNetLayer|TestAttentionLayer'
T 150 tests-other $X/cuda.test -test.v -test.short -test.run 'Test[^B]'
cd $ROOT/kernels; T 30 tests-kernels $X/kernels.test -test.v
cd $ROOT
T 40 bench-take $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -numerics fast
T 60 helper-rowstep27 env BIN=$X bash docs/perf/h200-rowstep27-final.sh
T 120 helper-rowtower30 bash docs/perf/h200-rowtower30.sh $X $O/rowtower30
T 65 helper-prefill28 bash docs/perf/h200-prefill28-lead.sh $X $O
T 100 helper-tier29 bash .carry-fa/tier29-lead.sh $X $O/tier29
T 40 bench-take-exact $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -numerics exact
T 20 bench-tower $X/proscenium-gpu bench-tower -synthetic full
(cd /tmp && tar czf $OUT/final-a.tgz final-a)
echo "== steps"; grep "^rc=" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -rhE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" $O --include=*.log | head -30
for h in $O/helper-*.log; do echo "==== $(basename $h)"; tail -40 $h; done
echo "== passes"; for f in $O/tests-*.log; do echo "$(basename $f): $(grep -c -- '--- PASS' $f) pass, $(grep -c -- '--- FAIL' $f) fail"; done
for f in bench-take bench-take-exact bench-tower; do echo "-- $f"; grep -hE "real-time|first audio|  frame|uncached|from the cache|backbone step|prefill|step |frame |launches|memory" $O/$f.log | head -12; done
