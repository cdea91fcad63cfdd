#!/bin/bash
# f16p34 (issue 28): the grouped FP8 experts with each activation as two FP16 parts (kernels/gemm.cu
# GEMM_PARTS_F16: hi = f16(s·x·2^f), lo = f16(s·x·2^f − hi), 2^f a power of two per X row and ring
# stage from the row's largest |s·x| in the stage, undone on the stage's float32 sums; the E4M3 weights
# widened by cvt.rn.f16x2.e4m3x2) instead of three BF16 parts: two MMAs a product instead of three, one
# conversion a weight pair instead of nine integer/BF16 instructions a word. Instances h2m128n{8,16,32}s
# {k64b2,k64b3} (gemm32's default families), chosen by PROSCENIUM_GPU_GEMM_F16=on (default off).
# ≤ 75 s, from the root of a checkout of branch f16p34 (merged with main):
#   bash docs/perf/h200-f16p34.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and f16p34.tgz go to LOGDIR; a summary is printed (failures first, then the figures).
# Hypotheses (docs/PERF.md "f16p34"): (1) the FP16 parts keep ≈ 22 bits of each s·x: every instance
# within 2e-5 of cpu.MatVec, rows of any float32 magnitude (1e±30, 3e34, subnormal, zero) right, NaN/Inf
# rows NaN/Inf without touching others, the fast prefill within 1e-4 on the four checkpoints; (2) the
# experts' per-stage instructions fall 10–25 % (SASS), so one layer's experts at 300 rows 0.43 → ≈ 0.37
# ms if issue-bound, the 300-row prefill 44.2 → ≈ 41.5 ms, 700 rows 98.1 → ≈ 93 ms.
set -u
B=$(cd "$1" && pwd); O=$(mkdir -p "$2" && cd "$2" && pwd); ROOT=$PWD
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
START=$(date +%s); END=$(( START + 74 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?
  echo "rc=$rc $n $(( $(date +%s) - t ))s" >> $O/steps.log; return $rc; }
{ date -u; git -C $ROOT log --oneline -1; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
C=$B/cuda.test; P=$B/proscenium-gpu
K='(h2|p3)m128n(8|16|32)sk64b[23]'  # the FP16-part instances and their BF16 twins
cd $ROOT/engine/cuda
# Correctness, four processes at once (≤ 24 s): the FP16 instances against the CPU and their twins
# (dense, grouped, odd shapes, passes), every magnitude class, NaN/Inf rows, every E4M3 code; the
# full geometry's experts; the fast backbone with the FP16 parts on and, for its worst rows beside
# them, off.
T 24 f16 env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMM_KERNELS="$K" $C -test.v \
  -test.run 'TestChooseGemm|TestGemmMmaInstancesCompiled|TestGemmF16|TestGemmF16Range|TestGemmFP8Codes' &
T 24 experts env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMM_KERNELS="$K" $C -test.v -test.run 'TestGemmGroupedExperts' &
T 24 backbone-on env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_F16=on $C -test.v \
  -test.run 'TestBackboneMatchesCPU$|TestBackboneMoE$|TestMoERouteNotANumber' &
T 24 backbone-off env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_F16=off $C -test.v \
  -test.run 'TestBackboneMatchesCPU$' &
wait
# Timing, one at a time: each family with FP16 against BF16 parts in one process (TestGemmFastSpeed's
# "f16p34" lines), then the prefill off / on / off / on.
T 14 speed env PROSCENIUM_GEMM_SPEED=1 $C -test.v -test.run 'TestGemmFastSpeed'
cd $ROOT
for v in off on off2 on2; do
  T 7 bench-$v env PROSCENIUM_GPU_GEMM_F16=${v%2} $P bench-backbone -synthetic full -numerics fast \
    -prefills 60,300,700 -steps 5
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/f16p34.tgz)
echo "== f16p34 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|relative error .* >|want NaN or Inf|want 0|differ from its twin|not a compiled" $O/*.log | cut -c1-220 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in f16 experts backbone-on backbone-off; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== FP16 instances against the CPU (‖·‖ relative, worst of the cases) and their BF16 twins"
grep -hE "f16 h2m.*relative error" $O/f16.log $O/experts.log | sed -E 's/.*(h2m[0-9a-z]+): relative error ([^ ]+).*/\1 \2/' | sort -k2 -g | tail -2
grep -hE "experts h2m.*relative error" $O/experts.log | sed -E 's/.*(h2m[0-9a-z]+): relative error ([^ ]+).*/experts \1 \2/' | sort -k3 -g | tail -1
grep -hE "experts p3m.*sk64b[23]: relative error" $O/experts.log | sed -E 's/.*(p3m[0-9a-z]+): relative error ([^ ]+).*/experts twin \1 \2/' | sort -k4 -g | tail -1
echo "== magnitude classes (row relative error, first row of each class)"; grep -hE "range h2m128n16sk64b3 grouped true:" $O/f16.log | sed 's/^ *gemm_f16_cuda_test.go:[0-9]*: //' | cut -c1-330
echo "== FP8 codes through the FP16 instances (worst relative error)"; grep -hE "h2m.* grouped .*worst relative error" $O/f16.log | sed 's/^ *gemm_experts_cuda_test.go:[0-9]*: //' | sort -k7 -g | tail -1
echo "== fast 300-row prefill against the CPU, worst row of the four checkpoints (bound 1e-4)"
for f in backbone-on backbone-off; do echo "$f: $(grep -hE "row prefill vs CPU: worst" $O/$f.log | sed -E 's/.*worst row [0-9]+ at ([^;]+);.*/\1/' | tr '\n' ' ')"; done
echo "== experts: each family with BF16 against FP16 parts (ms; × = BF16 / FP16), picks off / on"
grep -hE "f16p34 " $O/speed.log | sed 's/^ *gemm_fast_speed_cuda_test.go:[0-9]*: f16p34 //' | cut -c1-300
echo "== bench-backbone prefill ms at 60 / 300 / 700 rows (without MoE)"
for v in off on off2 on2; do echo "$v: $(grep -A3 -E "^rows +prefill ms" $O/bench-$v.log | awk 'NR>1 {p=p" "$2; m=m" "$3} END {print p " (" m " )"}')"; done
