#!/bin/bash
# attn32 (issues 27, 30): the decode step's gated full attention as one launch a layer under fast
# (kernels/attention_decode.cu attn_decode_fast: q/k norms, RoPE, the KV append, a flash-decode
# over the cache whose splits the last block merges, the gate), for the one-take step and the
# B-row step, chosen by PROSCENIUM_GPU_ATTN_DECODE=1 (default: the four kernels attn_prep,
# attn_scores, attn_partial, attn_combine). ≤ 60 s, from the root of a checkout of branch attn32
# (merged with main):
#   bash docs/perf/h200-attn32.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and attn32.tgz go to LOGDIR; a summary is printed.
# Hypotheses (docs/PERF.md "attn32"): (1) the new kernel is within fast's tolerance of the CPU
# (1e-5 a step's output, 1e-4 each head's vector) and of the four kernels, leaves the cache they
# leave (values bit for bit) and its counters zero, NaN at the capacity; the fast backbone with it
# stays within 1e-4 of the CPU, B rows equal to takes alone, PDL on and off the same; (2) one
# launch ≤ 8 µs where the four took ≈ 26 µs (ncu, main): the step's graph ≈ 0.1–0.2 ms shorter at
# B = 1 (383 → 353 launches), more at B = 8 where the four kernels' grids grow with B.
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
# Correctness, three processes at once (≤ 22 s): the kernel against the CPU and the four kernels
# (one row over 1100 cached rows, B rows of 3 and 8 takes), exact refused; the fast backbone with
# it against the CPU; the B-row step against takes alone and PDL on against off with it, and the
# B-row attention of the four kernels (refactored into attentionCoreRows) against one-row layers.
T 22 decode $C -test.v -test.run '^(TestAttentionDecode|TestAttentionDecodeRows|TestAttentionDecodeRefusesExact)$' &
T 22 backbone-cpu env PROSCENIUM_GPU_ATTN_DECODE=1 PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run '^TestBackboneMatchesCPU$' &
T 22 backbone-rows env PROSCENIUM_GPU_ATTN_DECODE=1 PROSCENIUM_TEST_NUMERICS=fast $C -test.v \
  -test.run '^(TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestAttentionStepRows)$' &
wait
# Timing: the core alone, old and new in one process (graphs of 50 cores, B = 1–8, 60–2000 rows
# cached); then the step, old against new, the bench's 60-row prompts and 1000-row ones.
T 8 timing $C -test.v -test.run '^TestAttentionDecodeTiming$'
cd $ROOT
for c in 60 1000; do  # the long prompts' prefills take ≈ 2 s more a run
  for v in 0 1; do
    T $(( c == 60 ? 6 : 9 )) bench-p$c-$v env PROSCENIUM_GPU_ATTN_DECODE=$v $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 \
      -numerics fast -prefill $c
  done
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/attn32.tgz)
echo "== attn32 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^FAIL|panic:|relative error .* >|off by|differ from|left at|not NaN" $O/*.log | cut -c1-220 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in decode backbone-cpu backbone-rows; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== decode against the CPU (worst vector; bound 1e-4) and the four kernels (worst; bound 1e-5)"
grep -hE "worst vector" $O/decode.log | awk '{print $NF, $0}' | sort -g | tail -2 | cut -d' ' -f2- | sed 's/^ *[a-z_]*test.go:[0-9]*: //' | cut -c1-150
grep -hE "against the four kernels: relative" $O/decode.log | awk '{print $(NF-2), $0}' | sort -g | tail -1 | cut -d' ' -f2- | sed 's/^ *[a-z_]*test.go:[0-9]*: //' | cut -c1-150
echo "== fast backbone with the decode against the CPU: the steps' worst rows (bound 1e-4), per checkpoint"
grep -hE "steps(, [^,]*,)? vs CPU: worst row" $O/backbone-cpu.log | sed -E 's/^ *backbone_cuda_test.go:[0-9]*: //; s/; worst against.*//' | head -8
echo "== the core alone (µs per core in a graph of 50)"; grep -hE "^timing decode" $O/timing.log | sed -E "s/^timing decode (attention, )?//"
echo "== the step (bench-backbone -rows 1,2,4,8 -steps 50): device ms, four kernels → one launch (launches)"
for c in 60 1000; do
  for v in 0 1; do grep -hE "^(B-row step|B = )" $O/bench-p$c-$v.log 2>/dev/null | sed -E "s/^/$v /"; done | awk -v c=$c '
    /one take.s Step/ { t[$1] = $(NF-4) } /^[01] B = / { ms[$1, $4] = $5; for (i = 1; i < NF; i++) if ($(i+1) == "launches,") l[$1, $4] = $i; bs[$4] = 1 }
    END { printf "%4d-row prompts: one-take Step %s → %s ms;", c, t[0], t[1]; n = split("1 2 4 8", w, " "); for (k = 1; k <= n; k++) { b = w[k]; if (b in bs) printf " B=%s %s → %s (%s → %s);", b, ms[0, b], ms[1, b], l[0, b], l[1, b] }; print "" }'
done
