#!/bin/bash
# Lead, session 9, run 4 (one call, ≤ 150 s) on main 4651034: grouped28's 64-row dense
# split-once instances reverted (run 1 measured them 10–15 % slower than gemm28's), the fast
# prefill grouping its experts from 1.25 pairs an expert. The GEMM kernels against the CPU
# (every instance), the backbone against the CPU under both policies, the GEMM timings, the
# prefill of 32…700 rows and the take benches.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run4.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run4; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-150} ))
bash docs/perf/h200-lead6-unpack.sh .carry-fa $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
C=$X/cuda.test; P=$X/proscenium-gpu
cd engine/cuda
T 50 gemm env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestChooseGemmFast|TestGemmMmaInstancesCompiled|TestGemmFP8Codes|TestGemmGroupedExperts|TestGemmFP8$|TestGemmBF16$' &
T 50 backbone-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestBackboneMatchesCPU$' &
T 50 backbone-exact $C -test.v -test.run 'TestBackboneMatchesCPU$' &
wait
T 8 speed env PROSCENIUM_GEMM_SPEED=1 $C -test.v -test.run 'TestGemmFastSpeed'
cd $ROOT
T 12 prefill $P bench-backbone -synthetic full -numerics fast -prefills 32,48,60,300,700
T 20 take-fast $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -numerics fast
T 20 take-ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
(cd /tmp && tar czf $OUT/run4.tgz --exclude=tokenizer.json run4)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|^        --- FAIL|panic:" $O/*.log | sort | uniq -c | head -20
for f in gemm backbone-fast backbone-exact; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail; end: $(tail -n 1 $O/$f.log)"; done
grep -hE "row prefill vs CPU" $O/backbone-fast.log | sed 's/^ *//' | cut -c1-110
grep -hE "worst relative error" $O/gemm.log | sed 's/^ *gemm_experts_cuda_test.go:[0-9]*: //' | sort -u | head -8
echo "-- speed"; grep -hE "\*$|experts n=" $O/speed.log | sed 's/^ *gemm_fast_speed_cuda_test.go:[0-9]*: //' | cut -c1-120
echo "-- prefill"; tail -n 6 $O/prefill.log
for f in take-fast take-ref10; do echo "-- $f"; grep -hE "real-time|first audio|backbone step|prefill|uncached|from the cache" $O/$f.log | head -8; done
