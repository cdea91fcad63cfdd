#!/bin/bash
# Ran once, in session 13 run 2 on int13a 8b99ac6; the split was slower and its code reverted (cd43ba4, 99c8d90):
# this script is the record of that run, not something main can run (its tests and switch are gone).
# gemvx13 (lead, session 13; issues 27, 30): the tensor-core projection split over its columns for the
# narrow matrices (kernels/gemv.cu gemvx_mma_bf16_fast with part/tiles; engine/cuda gemv.go
# gemvMMASplits), chosen by PROSCENIUM_GPU_GEMVX_SPLIT = off (default) | rows (B-row steps) | step (and
# the one-row step) | all (and the tower's narrow projections), fast numerics only.
# ≤ 90 s, from the root of a checkout: bash docs/perf/h200-gemvx13.sh BINDIR LOGDIR (BINDIR from
# docs/perf/h200-lead6-build.sh). Logs and gemvx13.tgz in LOGDIR; a summary (failures first).
# Hypotheses: (1) within 1e-5 of the CPU, the same bits twice, counters left 0; the backbone, the B-row
# step and the frames pass their fast tests with =all; (2) the out projection 2048 × 4096 and router +
# shared 1281 × 2048 at B = 1 from 2.2 / 1.1 TB/s to ≥ 3 / ≥ 2 TB/s, at B = 4 from 1.7 / 0.9; (3) the
# step −0.1…−0.2 ms at B = 1 (step), −0.2…−0.3 ms at B = 4 (rows); the tower frame −0.03…−0.08 ms (all).
set -u
B=$(cd "$1" && pwd); O=$(mkdir -p "$2" && cd "$2" && pwd); ROOT=$PWD
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
START=$(date +%s); END=$(( START + ${GEMVX13_S:-90} ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?
  echo "rc=$rc $n $(( $(date +%s) - t ))s" >> $O/steps.log; return $rc; }
C=$B/cuda.test; P=$B/proscenium-gpu; F="env PROSCENIUM_TEST_NUMERICS=fast"
cd $ROOT/engine/cuda
T 30 gemv $F $C -test.v -test.run '^(TestGemvMMASplit|TestGemvRowsMatchesOneRow|TestGemvRows)$' &
T 30 bb $F PROSCENIUM_GPU_GEMVX_SPLIT=all $C -test.v -test.run '^(TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder)$' &
T 30 frames $F PROSCENIUM_GPU_GEMVX_SPLIT=all $C -test.v -test.run '^(TestTowerFrames|TestTowerFrameRows|TestTakeFramesMatchAlone|TestFramesTwoAhead|TestFramesPrefixCacheMatchesUncached)$' &
wait
T 15 speed $F PROSCENIUM_GEMVX_BANDWIDTH=1 $C -test.v -test.run '^TestGemvMMASplitSpeed$'
cd $ROOT
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
i=0; for v in off rows step off step; do i=$(( i + 1 )); T 8 bench$i-$v env PROSCENIUM_GPU_GEMVX_SPLIT=$v $P $BB; done
for v in off all; do T 8 tower-$v env PROSCENIUM_GPU_GEMVX_SPLIT=$v $P bench-tower -synthetic full -rows 1,4; done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/gemvx13.tgz)
echo "== gemvx13 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|relative error .* >|differ" $O/gemv.log $O/bb.log $O/frames.log | cut -c1-200 | head -12
for f in gemv bb frames; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail, $(grep -c -- '--- SKIP' $O/$f.log) skip"; done
grep -h 'gemvx13 ' $O/speed.log | sed 's/^ *[a-z_.]*:[0-9]*: //' | cut -c1-200
for f in $(ls $O | grep -E '^bench[0-9]'); do echo "${f%.log}: $(grep -hE '^B = ' $O/$f | awk '{printf "B=%s %s  ", $3, $4}')"; done
for v in off all; do echo "tower-$v: $(grep -hE '^takes ' $O/tower-$v.log | awk '{printf "%s %s  ", $2, $6}')"; done
