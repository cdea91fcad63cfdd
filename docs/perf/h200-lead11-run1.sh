#!/bin/bash
# Lead, session 11, run 1 (one call, ≤ 540 s) on main 1c9a58b (session 10's final code, gemm31's
# l/ql variants dropped, bench-take's code digests): the seed-order fix checked (two processes,
# same digests), the session's baselines on the now-fixed synthetic weights (takes of one and
# four, the step and tower of B rows, the prefill), exact's batched take, a take under a 22 GiB
# device cap, ncu profiles with stall reasons and occupancy of the step (B = 1, 4) and a 300-row
# prefill's GEMMs for the helpers, then the device tests under -test.short to their end beside
# exact's free-running agreement.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run1.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run1; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-540} ))
bash docs/perf/h200-lead6-unpack.sh .carry-fa $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu
T 36 take-a $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -numerics fast
T 24 take-b $P bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -batch 1,4 -numerics fast
T 12 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 10 tower $P bench-tower -synthetic full -rows 1,2,4,8
T 12 prefill $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 34 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -numerics exact
T 45 take-cap22 $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -cap 23622320128
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
S="--clock-control none --profile-from-start off --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
T 50 ncu-step $NCU $S --graph-profiling node --launch-count 45 $P bench-backbone -synthetic full -profile-step -numerics fast
T 50 ncu-rows4 $NCU $S --graph-profiling node --launch-count 45 $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
T 60 ncu-prefill $NCU $S -k regex:gemm_mma --launch-count 16 $P bench-backbone -synthetic full -prefill 300 -profile-prefill -numerics fast
( for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
  T 60 agree-odd-exact $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics exact -out $O/agree-odd-exact.json
  T 60 agree-demo-exact $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 20 -frames 60 -numerics exact -out $O/agree-demo-exact.json ) &
(cd engine/cuda && T 230 tests-short $X/cuda.test -test.v -test.short)
wait
(cd /tmp && tar czf $OUT/run1.tgz --exclude=tokenizer.json run1)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" $O/*.log | sort | uniq -c | head -20
echo "tests-short: $(grep -c -- '--- PASS' $O/tests-short.log) pass, $(grep -c -- '--- FAIL' $O/tests-short.log) fail, $(grep -c -- '--- SKIP' $O/tests-short.log) skip; end: $(tail -n 1 $O/tests-short.log)"
for f in take-a take-b take-exact take-cap22; do echo "-- $f"; grep -hE "^take|takes after|takes' codes|first audio  |batch [14]|backbone step|hit rate" $O/$f.log | cut -c1-240; done
grep -hE "^B =" $O/rows.log | cut -c1-110; grep -h "^takes" $O/tower.log; grep -E '^(60|300|700) ' $O/prefill.log
for f in agree-odd-exact agree-demo-exact; do echo "-- $f"; tail -n 3 $O/$f.log | cut -c1-220; done
for f in ncu-step ncu-rows4 ncu-prefill; do echo "-- $f: $(grep -c 'Section: SpeedOfLight\|GPU Speed Of Light' $O/$f.log) kernels"; done
