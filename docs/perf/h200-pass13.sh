#!/bin/bash
# pass13 (issue 28): a prefill pass as long as the device has room for. PROSCENIUM_GPU_PREFILL_PLAN=auto
# (engine/cuda backbone_plan.go PrefillPassRows) plans passes of 2048 rows where the whole model stays
# on the device (the H200), 512 where it does not; "fixed" (the default) keeps 512. moe_group /
# moe_group_warps take 16 384 pairs (2048 rows × top 8) in dynamic shared memory. ≤ 75 s, from the
# root of a checkout of branch pass13 (merged with main):
#   bash docs/perf/h200-pass13.sh BINDIR OUTDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and pass13.tgz go to OUTDIR; a summary is printed.
# Hypotheses (docs/PERF.md "pass13"): (1) the 785-row prefill is one pass under auto, two under
# fixed, and matches the CPU either way (exact: bits; fast: the bound), as do the backbone and the
# voice cache; both groupings equal the definition up to 16 384 pairs; (2) a 700-row fast prefill
# 84.8 → ≈ 70 ms (one read of the experts, ≈ 16 ms, saved), 1000 rows likewise; 60 and 300 rows
# unchanged; the 30 s voice's uncached first audio (746 rows) ≈ 15 ms sooner.
set -u
B=$(cd "$1" && pwd); O=$(mkdir -p "$2" && cd "$2" && pwd); ROOT=$PWD
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
unset PROSCENIUM_GPU_PREFILL_ROWS  # it overrides either plan
START=$(date +%s); END=$(( START + 73 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?
  echo "rc=$rc $n $(( $(date +%s) - t ))s" >> $O/steps.log; return $rc; }
{ date -u; git -C $ROOT log --oneline -1; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
C=$B/cuda.test; P=$B/proscenium-gpu
FIX="env PROSCENIUM_GPU_PREFILL_PLAN=fixed"; AUTO="env PROSCENIUM_GPU_PREFILL_PLAN=auto"
TESTS='TestBackbonePrefillPassesMatchCPU|TestBackboneMatchesCPU$|TestFramesPrefixCacheMatchesUncached'
cd $ROOT/engine/cuda
# Correctness, five processes at once (≤ 26 s): both plans under both policies against the CPU; both
# groupings (moe_group, moe_group_warps) against the definition, 1 to 16 384 pairs.
T 26 exact-auto $AUTO $C -test.v -test.run "$TESTS" &
T 26 fast-auto $AUTO PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run "$TESTS" &
T 26 exact-fixed $FIX $C -test.v -test.run 'TestBackbonePrefillPassesMatchCPU' &
T 26 fast-fixed $FIX PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestBackbonePrefillPassesMatchCPU' &
T 26 group $C -test.v -test.run 'TestMoEGroup$|TestMoEGroupWarps' &
wait
cd $ROOT
# Timing, one at a time, old passes then auto: the fast prefills, then a take after a 30 s voice.
T 9 bb-fixed $FIX $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700,1000
T 9 bb-auto $AUTO $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700,1000
T 13 take-fixed $FIX $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
T 13 take-auto $AUTO $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
cd $ROOT/engine/cuda; T 6 group-timing $C -test.v -test.run 'TestMoEGroupTiming'; cd $ROOT
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/pass13.tgz)
echo "== pass13 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|ignored:" $O/*.log | cut -c1-220 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in exact-auto fast-auto exact-fixed fast-fixed group; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== 785-row prefill: passes (auto must be one, fixed two) and the worst rows"
for f in exact-auto fast-auto exact-fixed fast-fixed; do grep -hE "rows in [0-9]+ passes of|row prefill in passes of" $O/$f.log | sed "s/^ */$f: /" | cut -c1-160 | head -3; done
echo "== fast prefill ms (fixed: 512-row passes; auto)"
for f in bb-fixed bb-auto; do echo "-- $f"; grep -A5 -E "^device .*passes of" $O/$f.log | cut -c1-110; done
echo "== 30 s voice (746 rows) uncached, fixed then auto"
for f in take-fixed take-auto; do echo "-- $f"; grep -hE "^prompt |uncached|from the cache|tier plan|feedback rows" $O/$f.log | cut -c1-170 | head -6; done
echo "== grouping timing"; grep -hE "^timing moe group" $O/group-timing.log | cut -c1-140 | head -6
