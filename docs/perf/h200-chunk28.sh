#!/bin/bash
# chunk28's device run (≤ 60 s; from the root of a checkout of branch chunk28):
#   bash docs/perf/h200-chunk28.sh BINDIR OUTDIR
# BINDIR holds cuda.test and proscenium-gpu built from the same checkout with sm_90 kernels:
#   make kernels KERNEL_GENCODE='-gencode=arch=compute_90,code=sm_90'
#   go test -tags cuda -c -o BINDIR/cuda.test ./engine/cuda
#   go build -tags cuda -o BINDIR/proscenium-gpu ./cmd/proscenium-gpu
# (docs/perf/h200-chunk28-build.sh BINDIR does exactly that; the lead's h200-lead6-build.sh steps
# build the same two). OUTDIR gets one log per step and steps.log. What each step settles:
#   1. chunk-rule: deltanet_chunk_intra/_solve/_state against cpu.DeltaNetChunkedRef, both
#      policies in one run (1, 2, 63, 64, 65, 130, 300 rows; full and odd geometry): exact still
#      the CPU's bits (the exact SASS is main's, so this should pass as before), fast within
#      1e-5 (the host emulation, docs/perf/chunk28-emu, predicts ~1e-6);
#      chunk-layer: TestDeltaNetChunkedLayer, both policies (the fast prep and norm too);
#      chunk-mix: the mixer after its projections (prep … norm) against the CPU, outputs,
#      recurrent and conv state: TestDeltaNetMixBits under both policies (eachNumerics) and
#      TestDeltaNetPromptPassBits (passes of 64, 64, 1 rows) under fast, fast within 1e-5;
#   2. the layer and the backbone: TestDeltaNetLayer and TestBackboneMatchesCPU under fast and
#      exact, TestBackbonePrefillPassesMatchCPU under fast (fast within 1e-4 of the CPU, exact
#      its bits) — the fast chunk kernels inside every prefill;
#   3. TestDeltaNetChunkTiming: one layer's chunked mixer (prep … norm) and rule alone at 64,
#      300 and 512 rows under exact and fast (the session-7 profile's 300-row figures, 30 layers:
#      ≈ 574 µs a layer for the five kernels; expected under fast ≈ 370 µs, PERF.md);
#      bench-backbone -synthetic full -prefills 60,300,700 under fast and exact: whether fast's
#      prefill got faster than main's (session 9: 26.1 / 56.9 / 123.8 ms; the "without mixers"
#      column isolates the mixers' share). The expectation (PERF.md "chunk28 (unmeasured)"):
#      a few ms off the 300-row prefill, not more than the chunk kernels' ~17 ms under ncu.
set -u
B=$1; O=$2; ROOT=$PWD; mkdir -p $O
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + 58 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?; echo "rc=$rc $n" >> $O/steps.log; return $rc; }
C=$B/cuda.test; P=$B/proscenium-gpu
{ date -u; git rev-parse --short HEAD; cat $B/REV 2>/dev/null; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
# Checks, all at once (the CPU references share the host's 16 cores; each took ≤ 18 s alone).
T 28 chunk-rule $C -test.v -test.run 'TestDeltaNetChunkRule$' &
T 28 chunk-layer $C -test.v -test.run 'TestDeltaNetChunkedLayer$' &
T 28 chunk-mix env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestDeltaNetMixBits$|TestDeltaNetPromptPassBits$' &
T 28 layer-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestDeltaNetLayer$' &
T 28 layer-exact $C -test.v -test.run 'TestDeltaNetLayer$' &
T 28 backbone-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestBackboneMatchesCPU$' &
T 28 backbone-exact $C -test.v -test.run 'TestBackboneMatchesCPU$' &
T 28 passes-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestBackbonePrefillPassesMatchCPU$' &
wait
# Timings, one at a time.
T 6 chunk-timing $C -test.v -test.run 'TestDeltaNetChunkTiming$'
T 9 bench-fast $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 14 bench-exact $P bench-backbone -synthetic full -numerics exact -prefills 60,300,700
echo "== chunk28 steps"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -HE "^--- FAIL|^ +--- FAIL|^FAIL|panic:" $O/chunk-*.log $O/layer-*.log $O/backbone-*.log $O/passes-fast.log 2>/dev/null | sed "s|^$O/||" | head -14
grep -E "^rc=[1-9]" $O/steps.log | while read rc n; do echo "-- $n ($rc), last lines:"; tail -n 3 $O/$n.log | cut -c1-160; done
echo "== chunked DeltaNet vs the CPU (rule and mixer: fast bound 1e-5, layer 1e-4; exact: the CPU's bits, 0 differ)"
for f in chunk-rule chunk-layer chunk-mix; do
  # (the layer's row-recurrence subtests are left out: not the CPU's bits by design)
  awk -v f=$f '/^=== (RUN|CONT) +Test[A-Za-z]+\/(exact|fast)/ { split($3, p, "/"); pol = p[2]; rec = $3 ~ /row_recurrence/ }
       /^=== RUN +TestDeltaNetPromptPassBits/ { pol = "fast (prompt passes)"; rec = 0 }
       rec { next }
       /relative error/ { for (i = 1; i < NF; i++) if ($i == "error") { v = $(i+1) + 0; if (v > w[pol]) w[pol] = v } n[pol]++ }
       / differ, max | differ from the CPU.s bits, max / { for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\/[0-9]+$/) { split($i, d, "/"); if (d[1] > 0) nd[pol]++ } }
       END { for (k in n) printf "%s %s: %d comparisons, worst relative error %.3g, %d with bits differing\n", f, k, n[k], w[k], nd[k] }' $O/$f.log
done
grep -hE "^ *--- (PASS|FAIL): TestDeltaNet(ChunkRule|ChunkedLayer|MixBits)/(exact|fast) |^--- (PASS|FAIL): TestDeltaNetPromptPassBits " $O/chunk-*.log | sed 's/^ *//'
echo "== layer and backbone vs CPU (fast bound 1e-4; exact: 0 values differ)"
for f in layer-fast layer-exact; do echo "$f: $(grep -hE '^(--- )?(PASS|FAIL|ok)' $O/$f.log | tail -n 2 | tr '\n' ' ')"; done
grep -hE "(prefill|steps|passes of [0-9]+) vs CPU: worst" $O/backbone-fast.log $O/backbone-exact.log $O/passes-fast.log 2>/dev/null |
  sed -E 's/^ *[a-z_]+_test.go:[0-9]+: //; s/; worst against.*bits:/; bits:/' | cut -c1-110 | head -12
echo "== one layer's chunked prefill on the device (TestDeltaNetChunkTiming; µs a call, mean of 20)"; grep -h "^timing" $O/chunk-timing.log
echo "-- bench fast (main, session 9: 26.10 / 56.86 / 123.75 ms; without mixers 15.60 / 32.77 / 68.31)"; tail -n 4 $O/bench-fast.log
echo "-- bench exact"; tail -n 4 $O/bench-exact.log
