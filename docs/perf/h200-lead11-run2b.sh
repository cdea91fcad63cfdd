#!/bin/bash
# Lead, session 11, run 2b (one call, ≤ 150 s): why TestCUDAEngineTiers/fast met an illegal address
# in run 2 (int11: two frames in flight by default + the helpers' branches, their paths off).
# Both bundles: .carry-fm (main cfaa4e5: two in flight, no helper) and .carry-fa (int11 4c36470).
# The engine tests three times each way (two in flight, one), then the failing subtest under
# compute-sanitizer memcheck; TestBackboneMatchesCPU with run 2's two failing seeds on the default
# paths (were those failures the inputs' conditioning or the new kernels?).
set -u
ROOT=$PWD; O=/tmp/run2b; rm -rf $O; mkdir -p $O
START=$(date +%s); END=$(( START + ${BUDGET_S:-150} ))
M=$ROOT/.carry-m; I=$ROOT/.carry-i; mkdir -p $M $I
bash docs/perf/h200-lead6-unpack.sh .carry-fm $M > $O/unpack.log 2>&1 && bash docs/perf/h200-lead6-unpack.sh .carry-fa $I >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
cd cmd/proscenium-gpu
E='^TestCUDAEngine(Tiers|Takes|BatchedTakes)$'
T 50 main-two $M/proscenium-gpu.test -test.v -test.count 3 -test.run "$E" &
T 50 main-one env PROSCENIUM_GPU_FRAMES_AHEAD=1 $M/proscenium-gpu.test -test.v -test.count 3 -test.run "$E" &
T 50 int-two $I/proscenium-gpu.test -test.v -test.count 3 -test.run "$E" &
T 50 int-one env PROSCENIUM_GPU_FRAMES_AHEAD=1 $I/proscenium-gpu.test -test.v -test.count 3 -test.run "$E" &
wait
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
T 70 memcheck-main $SAN --tool memcheck --print-limit 20 $M/proscenium-gpu.test -test.v -test.run 'TestCUDAEngineTiers/fast' &
cd $ROOT/engine/cuda
T 40 seed-odd env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_TEST_SEED=6363219538497865696 $M/cuda.test -test.v -test.run 'TestBackboneMatchesCPU$' &
T 40 seed-fp8 env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_TEST_SEED=16374167698485392186 $M/cuda.test -test.v -test.run 'TestBackboneMatchesCPU$' &
wait
(cd /tmp && tar czf $OUT/run2b.tgz --exclude=tokenizer.json run2b)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
for f in main-two main-one int-two int-one seed-odd seed-fp8; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail; $(grep -hE 'IllegalAddress|bound is widened|over its bound' $O/$f.log | head -3 | cut -c1-200)"; done
echo "-- memcheck"; grep -E "Invalid|at 0x|by thread|ERROR SUMMARY|in .*\(|Address" $O/memcheck-main.log | head -30 | cut -c1-220; tail -n 3 $O/memcheck-main.log
