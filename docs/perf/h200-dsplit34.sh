#!/bin/bash
# dsplit34 (issue 28): deterministic split-K for the prefill's narrow dense GEMMs. kernels/gemm.cu
# gemm_mma_*_p3m128n64qz (the 128 × 64 q tile, its 32-column k steps over the grid's z) now stores each
# split's float32 partial tile in a workspace (engine/cuda gemm_splitk_cuda.go: 528 partial tiles +
# counters, 17.3 MB in the backbone's plan) and the tile's last block to count in sums the Z partials in
# z order into Y — the same bits every run for any count (dense33's red.global.add summed in arrival
# order into a memset-zeroed Y). PROSCENIUM_GPU_GEMM_SPLITK (engine/cuda gemm_fast.go): unset = "on"
# (the new default: gemmSplitKDefault), "none" off, N at most N splits, "all" every dense GEMM split.
# The deep ring (PROSCENIUM_GPU_GEMM_DENSE_DEEP) is gone.
# ≤ 60 s, from the root of a checkout of branch dsplit34 (merged with main):
#   bash docs/perf/h200-dsplit34.sh BINDIR OUTDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and dsplit34.tgz go to OUTDIR; a summary is printed.
# Hypotheses (docs/PERF.md "dsplit34"): (1) every count 2…16 within 2e-5 of the CPU, the same bits run
# twice over NaN-poisoned partials, the bits of the z-ordered sum of each split's own partial (3, 5, 16
# splits, BF16), and the same digests in two processes run at once (different arrival orders); the
# fast prefill within 1e-4 of the CPU with "on" and "all"; (2) the ordered sum costs ≈ 1–4 µs a split
# GEMM over the atomic one (the last block of a tile reads Z − 1 partials of 32 KB from L2), partly
# paid back by the memset node it drops: prefill "on" ≈ 18.7 / 42.1 / 92.7 ms at 60 / 300 / 700 rows
# (run 1's atomic "on": 18.53 / 42.05 / 92.58; none 21.03 / 43.25 / 96.88; "2" 21.16 / 41.70 / 95.03).
set -u
B=$(cd "$1" && pwd); O=$(mkdir -p "$2" && cd "$2" && pwd); ROOT=$PWD
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
START=$(date +%s); END=$(( START + 59 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?
  echo "rc=$rc $n $(( $(date +%s) - t ))s" >> $O/steps.log; return $rc; }
{ date -u; git -C $ROOT log --oneline -1; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
C=$B/cuda.test; P=$B/proscenium-gpu
cd $ROOT/engine/cuda
# Correctness, four processes at once (≤ 22 s): the split-K instance in two processes of one seed (their
# bits digests must match: two processes sharing the GPU finish blocks in other orders) with the host
# rules in one; the fast backbone (300-row prefills and 40 steps on the four checkpoints) with the rule
# ("on") and with every dense GEMM split ("all": the tiny checkpoints' projections are too small for
# the rule, so this runs every projection of their prefill split, up to 16 ways).
SEED=3401
T 22 split-a env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_TEST_SEED=$SEED $C -test.v -test.run 'TestChooseGemm|TestGemmMmaInstancesCompiled|TestGemmSplitK' &
T 22 split-b env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_TEST_SEED=$SEED $C -test.v -test.run 'TestGemmSplitK' &
T 22 backbone-on env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_SPLITK=on $C -test.v -test.run 'TestBackboneMatchesCPU$' &
T 22 backbone-all env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_SPLITK=all $C -test.v -test.run 'TestBackboneMatchesCPU$' &
wait
# Timing, one at a time: every split count against the default pick on the full geometry's dense
# shapes (TestGemmFastSpeed's "dense33" lines, now the ordered sum); the prefill with none, at most 2
# splits and the rule ("on", the default).
T 14 speed env PROSCENIUM_GEMM_SPEED=1 $C -test.v -test.run 'TestGemmFastSpeed'
cd $ROOT
for v in none 2 on; do
  T 6 bench-$v env PROSCENIUM_GPU_GEMM_SPLITK=$v $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/dsplit34.tgz)
echo "== dsplit34 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|relative error .* >|not the poison|, not [-0-9.e+]+ \(" $O/*.log | cut -c1-220 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in split-a split-b backbone-on backbone-all; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== bits across two processes at once (digests of every count and case, and of the unsplit tile)"
grep -hoE "p3m128n64q(z[0-9]+)? bits digest [0-9a-f]+" $O/split-a.log > $O/digests-a.txt
grep -hoE "p3m128n64q(z[0-9]+)? bits digest [0-9a-f]+" $O/split-b.log > $O/digests-b.txt
echo "$(wc -l < $O/digests-a.txt) digests, $(wc -l < $O/digests-b.txt) in the second process; $(diff $O/digests-a.txt $O/digests-b.txt | grep -c '^<') differ$( [ -s $O/digests-a.txt ] && cmp -s $O/digests-a.txt $O/digests-b.txt && echo ' — SAME BITS')"
echo "== split-K: worst relative error against the CPU and against the unsplit tile (every count, case)"
grep -hE "split-K p3m128n64qz[0-9]+: relative error" $O/split-a.log | sed -E 's/.*(qz[0-9]+): relative error ([^ ]+).*/\2 \1/' | sort -g | tail -1 | sed 's/^/CPU: /'
grep -hE "qz[0-9]+ against p3m128n64q: relative error" $O/split-a.log | sed -E 's/.*(qz[0-9]+) against.*relative error ([^ ]+).*/\2 \1/' | sort -g | tail -1 | sed 's/^/tile: /'
echo "split outputs checked (CPU, tile, twice, z-ordered sum at 3/5/16 BF16): $(grep -c "qz[0-9]* bits digest" $O/split-a.log); a mismatch is a failure above"
echo "== fast 300-row prefill against the CPU, worst row of the four checkpoints (bound 1e-4)"
for f in backbone-on backbone-all; do echo "$f: $(grep -hE "row prefill vs CPU: worst" $O/$f.log | sed -E 's/.*worst row [0-9]+ at ([^;]+);.*/\1/' | tr '\n' ' ')"; done
echo "== dense shapes: the default pick against each split count, ordered sum (ms; × = pick / split; <rule: on's count)"
echo "   (run 1, atomic: out n=60 z16 0.0186 against 0.0488; router+shared n=60 z8 0.0122 against 0.0237)"
grep -hE "dense33 " $O/speed.log | sed 's/^ *gemm_fast_speed_cuda_test.go:[0-9]*: dense33 //' | cut -c1-300
echo "== bench-backbone prefill ms at 60 / 300 / 700 rows (without MoE); run 1: none 21.03 / 43.25 / 96.88, 2 21.16 / 41.70 / 95.03, atomic on 18.53 / 42.05 / 92.58"
for v in none 2 on; do echo "$v: $(grep -A3 -E "^rows +prefill ms" $O/bench-$v.log | awk 'NR>1 {p=p" "$2; m=m" "$3} END {print p " (" m " )"}')"; done
