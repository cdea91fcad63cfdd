#!/bin/bash
# tower33 (issues 27, 30): the lean draw (kernels/sampling.cu sample_logits_lean,
# PROSCENIUM_GPU_SAMPLER=lean; default: sample_logits_warp_pick, selectable as =pick). The default
# draw's arithmetic in the same order (the same codes and embedding bits) with its critical path
# shortened: the control block read with the logits, the logits decoded from the order keys (no
# re-read, no gathers), the threshold's sort and merges on the keys' 32-bit float parts, the merges
# on 16 warps (named barrier) while the other 16 sum Z (3 block barriers to the candidates where the
# default has 12), the ≤ 64 candidates ranked in one pass instead of a 21-step shared-memory bitonic
# network, the next layer's embedding row and gains loaded in one round. ≤ 60 s, from the root of a
# checkout of branch tower33 (merged with main):
#   bash docs/perf/h200-tower33.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and tower33.tgz go to LOGDIR; a summary is printed.
# Hypotheses (docs/PERF.md "tower33"): (1) lean draws the default's code for every vector (0
# differ) and the same embedding bits, and both agree with the CPU sampler; the tower frames with
# lean pass as with the default (CPU within 1e-4, feedback rows bit-exact, B-row frames the takes'
# alone); (2) a draw ≈ 3–4.5 µs shorter (11.6 → ≈ 7–8.5 µs over 4097 logits), so the B = 1 tower
# frame 0.79 → ≈ 0.75–0.76 ms and the frame of four 1.150 → ≈ 1.11–1.12 ms; the take's frame
# ≈ 0.035 ms less; bench-take's codes hashes the same under both.
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
# Correctness, four processes at once (≤ 16 s): lean against the default (codes, embedding bits)
# and both (and the older two) against the CPU sampler; the tower frames with the default draw and
# with lean in one process (demo, odd; the pattern also runs each geometry's default subtest); the
# frame tests with lean as the process's draw (fast and exact).
T 16 sampler env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.short \
  -test.run 'TestSamplerMatchesCPU|TestSamplerLean|TestSamplerFrameDraw' &
T 16 frames env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.short -test.run 'TestTowerFrames/(demo|odd)/lean-draw' &
T 16 lean-fast env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_SAMPLER=lean $C -test.v -test.short \
  -test.run 'TestSamplerFrameDraw|TestTowerFrameRows|TestTakeFramesMatchAlone|TestFramesTwoAhead' &
T 16 lean-exact env PROSCENIUM_TEST_NUMERICS=exact PROSCENIUM_GPU_SAMPLER=lean $C -test.v -test.short \
  -test.run 'TestTowerFrames|TestTakeFramesMatchAlone' &
wait
# Timing, one at a time, old then new: the tower frame of 1, 2, 4, 8 takes; the take (B = 1, 4).
cd $ROOT
for s in pick lean; do T 5 tower-rows-$s env PROSCENIUM_GPU_SAMPLER=$s $P bench-tower -synthetic full -rows 1,2,4,8; done
for s in pick lean; do
  T 17 take-$s env PROSCENIUM_GPU_SAMPLER=$s $P bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -batch 1,4 \
    -seed-base 3 -numerics fast
done
for s in pick lean; do T 5 tower-$s env PROSCENIUM_GPU_SAMPLER=$s $P bench-tower -synthetic full; done  # one draw alone
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/tower33.tgz)
echo "== tower33 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|differ|must be the same|relative error .* >" $O/*.log | grep -vE " 0 differ|differ within rounding" | cut -c1-220 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in sampler frames lean-fast lean-exact; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== draws against the CPU / lean against the default"; grep -hE "draws \(sizes|draws, each by both" $O/sampler.log | sed 's/^ *//' | cut -c1-160
echo "== tower frame (old = pick, new = lean)"
for s in pick lean; do echo "-- $s"; grep -hE "^takes [0-9]" $O/tower-rows-$s.log | cut -c1-110; done
echo "== take, B = 1 and 4"
for s in pick lean; do echo "-- $s"; grep -hE "^(take |  frame|batch [14] )" $O/take-$s.log | cut -c1-150; done
echo "== one draw, whole frame (bench-tower)"
for s in pick lean; do echo "-- $s"; grep -hE "^(one draw|frame \(temperature|frame, top_p)" $O/tower-$s.log | cut -c1-140; done
