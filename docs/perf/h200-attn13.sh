#!/bin/bash
# attn13 (issue 28): the prefill's prompt attention register-tiled (kernels/attention_prompt.cu
# attn_flash2_fast: 64 query vectors a block, 4 × 4 scores and 8 × 16 outputs a thread, no warp
# sums), chosen by PROSCENIUM_GPU_ATTN_FLASH=2 (default: attn_flash_fast, flash28's). ≤ 60 s, from
# the root of a checkout of branch attn13 (merged with main):
#   bash docs/perf/h200-attn13.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and attn13.tgz go to LOGDIR; a summary (≤ 50 lines) is printed.
# Hypotheses (docs/PERF.md "## attn13"): (1) attn_flash2_fast is within 1e-5 (whole) / 1e-4 (each
# vector) of cpu.AttentionCoreRef at every split, and the fast prefill through it within the
# backbone tests' 1e-4; (2) the core a layer ≈ 3× faster than attn_flash_fast (300 rows ≈ 136 →
# ≈ 40–50 µs), ≈ 1 ms off a 300-row prefill and ≈ 3 ms off a 700-row one-pass prefill.
set -u
B=$(cd "$1" && pwd); O=$(mkdir -p "$2" && cd "$2" && pwd); ROOT=$PWD
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
START=$(date +%s); END=$(( START + 58 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?
  echo "rc=$rc $n $(( $(date +%s) - t ))s" >> $O/steps.log; return $rc; }
{ date -u; git -C $ROOT log --oneline -1; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
C=$B/cuda.test; P=$B/proscenium-gpu
cd $ROOT/engine/cuda
# Correctness, four processes at once (≤ 26 s; flash28's run: 15–18 s each): both kernels against the
# CPU's attention core (every call at the backbone's splits, one and the most); the fast backbone
# through attn_flash2_fast (300-row prefills; a 512-row pass then 273 rows after it); a script after
# a cached voice with it.
T 26 attention env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestAttentionFlash$|TestAttentionFlashRefusesExact' &
T 26 backbone2 env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_ATTN_FLASH=2 $C -test.v -test.run 'TestBackboneMatchesCPU$' &
T 26 passes2 env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_ATTN_FLASH=2 $C -test.v -test.run 'TestBackbonePrefillPassesMatchCPU' &
T 26 prefix2 env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_ATTN_FLASH=2 $C -test.v -test.run 'TestFramesPrefixCacheMatchesUncached' &
wait
# Timing: the core alone, both kernels in one process; then the prefill, one-pass plan, old and new.
T 10 timing $C -test.v -test.run 'TestAttentionFlashTiming'
cd $ROOT
for v in 2 1; do
  e=$v; [ $v = 1 ] && e=
  T 9 bench-$v env PROSCENIUM_GPU_PREFILL_PLAN=auto PROSCENIUM_GPU_ATTN_FLASH=$e $P bench-backbone -synthetic full \
    -numerics fast -prefills 60,300,700
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/attn13.tgz)
echo "== attn13 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|off by|relative error .* >" $O/*.log | cut -c1-200 | head -10
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n:"; tail -n 2 $O/$n.log | cut -c1-200; done
for f in attention backbone2 passes2 prefix2; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail, $(grep -c -- '--- SKIP' $O/$f.log) skip"; done
echo "== worst vector (bound 1e-4), per kernel"; for k in flash flash2; do
  echo "$k: $(grep -hE "^ +attention_flash_cuda_test.go:[0-9]+: $k call" $O/attention.log | sed -E 's/.* at ([0-9.e+-]+)$/\1/' | sort -g | tail -1)"; done
echo "== fast backbone with flash2 (bound 1e-4)"; grep -hE "vs CPU|passes of" $O/backbone2.log $O/passes2.log | sed 's/^ *//' | cut -c1-140 | head -8
echo "== core timing (µs a layer)"; grep -hE "^timing" $O/timing.log | cut -c1-150
for v in 2 1; do echo "== bench-backbone, ATTN_FLASH=$v"; grep -A4 -E "^rows +prefill ms" $O/bench-$v.log | cut -c1-100; done
