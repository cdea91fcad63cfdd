#!/bin/bash
# Lead, session 11, run 2 (one call, ≤ 480 s) on int11 = main (two frames in flight by default) +
# the helpers' branches moe32, dn32, attn32, gemm32 (each new path off by default, on by its env):
# each helper's own script (correctness first, then its A/B in one process or run); the engine's
# and the take set's tests under the new default and with one frame in flight; the codec's chunk
# (32 against 64 frames) on takes of one and four; every new path on against the defaults
# (takes, the step of B rows, the prefill).
# Carried: .carry-fa (h200-lead6-build.sh of int11). Logs: $OUT/run2.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run2; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-480} ))
bash docs/perf/h200-lead6-unpack.sh .carry-fa $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu
for h in moe32 dn32 attn32 gemm32; do T 64 $h bash docs/perf/h200-$h.sh $X $O/$h; done
# The new default (two frames in flight) through the engine, and one in flight still right.
R='^(TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestTakeFramesPCMMatchesAlone|TestFramesTwoAhead)$'
(cd engine/cuda && T 45 one-exact env PROSCENIUM_GPU_FRAMES_AHEAD=1 $X/cuda.test -test.v -test.run "$R") &
(cd engine/cuda && T 45 one-fast env PROSCENIUM_GPU_FRAMES_AHEAD=1 PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$R") &
(cd cmd/proscenium-gpu && T 45 engine-exact $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd cmd/proscenium-gpu && T 45 engine-fast env PROSCENIUM_TEST_NUMERICS=fast $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -batch 1,4 -seed-base 3 -numerics fast"
T 25 chunk32 $P $TK
T 25 chunk64 $P $TK -chunk-max 64
ALL="PROSCENIUM_GPU_MOE_DOWN2=1 PROSCENIUM_GPU_SPLIT_ROUTE=rows PROSCENIUM_GPU_DN_CLUSTER=1 PROSCENIUM_GPU_ATTN_DECODE=1 PROSCENIUM_GPU_GEMM_GROUPED=${GROUPED:-k64b2}"
T 12 rows-def $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 12 rows-all env $ALL $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 12 prefill-all env $ALL $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
TK4="bench-take -synthetic full -prompt 60 -frames 300 -takes 4 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast"
T 34 take-def $P $TK4
T 34 take-all env $ALL $P $TK4
(cd /tmp && tar czf $OUT/run2.tgz --exclude=tokenizer.json run2)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -rhE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" $O --include=*.log | sort | uniq -c | head -20
for f in one-exact one-fast engine-exact engine-fast; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail; end: $(tail -n 1 $O/$f.log)"; done
for h in moe32 dn32 attn32 gemm32; do echo "==== $h"; tail -n 22 $O/$h.log | cut -c1-180; done
for f in chunk32 chunk64 take-def take-all; do echo "-- $f"; grep -hE "takes after|takes' codes|  frame  |batch [14]" $O/$f.log | cut -c1-200; done
for f in rows-def rows-all; do echo "-- $f"; grep -hE "^B =" $O/$f.log | cut -c1-100; done
echo "-- prefill-all"; grep -E '^(60|300|700) ' $O/prefill-all.log
