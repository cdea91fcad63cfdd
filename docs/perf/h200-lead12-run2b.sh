#!/bin/bash
# Lead, session 12, run 2b (one call, ≤ 200 s) on int12c 3ef9bfe (the defaults after run 2: the lean
# draw, split-K summed in z order, FP16 parts for the experts' tiles of 16 and 32 X rows; rows34
# reverted). Where the time goes now, for this session's next helpers: ncu durations (and DRAM bytes)
# of every kernel of a 300-row and a 700-row prefill pass, of the B = 4 step and the B = 1 step; and
# the new defaults' own checks (fast backbone against the CPU, the GEMM tests of the new instances).
# Carried: .carry-fa. Logs: $OUT/run2b.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run2b; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-200} ))
bash docs/perf/h200-lead6-unpack.sh .carry-fa $X >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu
(cd engine/cuda && T 60 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestGemmF16|TestGemmF16Range|TestGemmSplitK|TestGemmGroupedExperts|TestFramesPrefixCacheMatchesUncached)$') &
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M="--clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv"
T 50 ncu-prefill300 $NCU $M $P bench-backbone -synthetic full -prefill 300 -profile-prefill -numerics fast
wait
T 60 ncu-prefill700 $NCU $M $P bench-backbone -synthetic full -prefill 700 -profile-prefill -numerics fast
T 40 ncu-rows4 $NCU $M --graph-profiling node $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
T 40 ncu-step $NCU $M --graph-profiling node $P bench-backbone -synthetic full -profile-step -numerics fast
(cd /tmp && tar czf $OUT/run2b.tgz --exclude=tokenizer.json run2b)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "tests-fast: $(grep -c -- '--- PASS' $O/tests-fast.log) pass, $(grep -c -- '--- FAIL' $O/tests-fast.log) fail; end: $(tail -n 1 $O/tests-fast.log)"
grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" $O/tests-fast.log | head
for f in ncu-prefill300 ncu-prefill700 ncu-rows4 ncu-step; do echo "== $f"; python3 docs/perf/ncu-sum.py $O/$f.log | head -22; done
