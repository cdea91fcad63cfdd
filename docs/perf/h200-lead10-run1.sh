#!/bin/bash
# Lead, session 10, run 1 (one call, ≤ 400 s): main e4229bd's two commits that no GPU ran
# (e805c72 routed gate·up instances from the generated lists; 9fe3ac6 callers' syncs dropped
# now that Upload drains), branch chunk28 (fast chunked DeltaNet) by its own script, the main
# stream's priority and the host's wait mode A/B'd on takes of one and four, and ncu profiles
# of today's step (B = 1 and B = 4) and a 300-row prefill.
# Carried: .carry-fa (h200-lead6-build.sh of int10 = main + priority knobs + chunk28). Logs: $OUT/run1.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run1; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-400} ))
bash docs/perf/h200-lead6-unpack.sh .carry-fa $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
cp .carry-fa/REV $X/REV
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $O/machine.txt 2>&1
C=$X/cuda.test; P=$X/proscenium-gpu
# 1. chunk28's own script (≤ 58 s).
T 62 chunk28 bash docs/perf/h200-chunk28.sh $X $O/chunk28
# 2. main's unrun commits: step, PDL, MoE route, fused, upload order, frames and voice cache, both policies.
R='^(TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestMoEStepChainPDL|TestFusedStep|TestMoEGateUpRoute|TestUploadAfterEnqueuedWork|TestFramesPrefixCacheMatchesUncached|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesBeginPromptMatchesTheCPU)$'
cd engine/cuda
T 50 fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run "$R" &
T 50 exact $C -test.v -test.run "$R" &
wait
cd $ROOT
# 3. takes: priority (default on) and the host's wait, A/B.
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -numerics fast"
T 30 take-default $P $TK
T 30 take-noprio env PROSCENIUM_GPU_STREAM_PRIORITY=0 $P $TK
T 30 take-spin env PROSCENIUM_GPU_SYNC=spin $P $TK
T 12 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
# 4. profiles (ncu, durations and DRAM bytes).
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M="--clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv"
T 50 ncu-rows4 $NCU $M --graph-profiling node $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
T 60 ncu-prefill $NCU $M $P bench-backbone -synthetic full -prefill 300 -profile-prefill -numerics fast
T 50 ncu-step $NCU $M --graph-profiling node $P bench-backbone -synthetic full -profile-step -numerics fast
(cd /tmp && tar czf $OUT/run1.tgz run1)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== chunk28"; tail -n 40 $O/chunk28.log
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|^        --- FAIL|panic:" $O/fast.log $O/exact.log | sort | uniq -c | head -20
for f in fast exact; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail; end: $(tail -n 1 $O/$f.log)"; done
for f in take-default take-noprio take-spin; do echo "-- $f"; grep -hE "real-time|first audio|backbone step|audio s per s|aggregate|B = " $O/$f.log | cut -c1-200 | head -14; done
grep -hE "^B =|B-row step" $O/rows.log | cut -c1-200
for f in ncu-step ncu-rows4 ncu-prefill; do echo "-- $f"; python3 docs/perf/ncu-agg.py $O/$f.log 2>&1 | head -24; done
