#!/bin/bash
# dnstate34 (issue 28): the fast chunked DeltaNet prefill's state pass as register tiles.
# kernels/deltanet_chunk.cu deltanet_chunk_state_tiled (fast only; exact keeps deltanet_chunk_state):
# per 64-row chunk a thread 4 rows × 2 columns of [W; q]·S0 (8 shared wavefronts a warp per 32 FMAs,
# the old kernel 40), then warps 8–15 the outputs' qm·Δ part while warps 0–7 update S (8 rows × 2
# columns a thread in registers); the chunk's W, q, Δ0, c, qm and k by cp.async into 153 KB of dynamic shared memory ahead
# of use; 4 barriers a chunk (old: 30). PROSCENIUM_GPU_DN_STATE (engine/cuda deltanet_chunk_state.go):
# unset = simt (deltaNetStateTiledDefault = false, the one-line flip), "tiled" the new kernel.
# ≤ 60 s, from the root of a checkout of branch dnstate34 (merged with main):
#   bash docs/perf/h200-dnstate34.sh BINDIR OUTDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and dnstate34.tgz go to OUTDIR; a summary is printed.
# Hypotheses (docs/PERF.md "dnstate34"): (1) tiled within 1e-5 of the CPU's chunked form and of the
# SIMT kernel at 1 … 700 rows (head dims 128/128, 20/28, 38/40, 190/36; the host emulation,
# docs/perf/dnstate34-emu, finds ≤ 1.0e-6, as the SIMT kernel), exact unchanged (its bits), the fast backbone within 1e-4;
# (2) the state pass at 300 rows ≈ 136 → ≈ 32 µs a layer (700 rows ≈ 300 → ≈ 66), the prefill −3 ms at
# 300 rows, −7 ms at 700 (PERF.md's arithmetic: ≈ 5.7 µs a chunk against 27).
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
# Correctness, six processes at once (≤ 34 s; the passes test, the slowest — it timed out at 28 s
# beside seven others in chunk31's run — first and with the longest limit): tiled against SIMT and
# the CPU in one process (1 … 700 rows, four geometries); with the switch on, the rule under both
# policies (exact must keep the CPU's bits: its kernel is untouched), the chunked layer under fast,
# the mixer's bits tests under fast, and the fast backbone (TestBackboneMatchesCPU,
# TestBackbonePrefillPassesMatchCPU: 785 rows in passes of 512, the state carried across passes).
export PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_DN_STATE=tiled
T 34 passes $C -test.v -test.run 'TestBackbonePrefillPassesMatchCPU$' &
T 28 backbone $C -test.v -test.run 'TestBackboneMatchesCPU$' &
T 28 state $C -test.v -test.run 'TestDeltaNetChunkStateTiled$' &
T 28 rule $C -test.v -test.run 'TestDeltaNetChunkRule$' &
T 28 layer $C -test.v -test.run 'TestDeltaNetChunkedLayer$/^fast$' &
T 28 mix $C -test.v -test.run 'TestDeltaNetMixBits$|TestDeltaNetPromptPassBits$' &
wait
unset PROSCENIUM_GPU_DN_STATE
# Timing, one at a time: the state pass alone both ways (one process), one layer's chunked mixer and
# rule with each (TestDeltaNetChunkTiming, both policies), the prefill with each, twice (off, on, then
# after the layer timings off, on again; the last ones skipped if the time is out).
B() { (cd $ROOT && T 5 bench-$1 env PROSCENIUM_GPU_DN_STATE=${1%2} $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700); }
T 5 state-timing $C -test.v -test.run 'TestDeltaNetChunkStateTiming$'
B simt; B tiled
for v in simt tiled; do T 5 chunk-timing-$v env PROSCENIUM_GPU_DN_STATE=$v $C -test.v -test.run 'TestDeltaNetChunkTiming$'; done
B simt2; B tiled2
cd $ROOT
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/dnstate34.tgz)
echo "== dnstate34 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^ +--- FAIL|^FAIL|panic:|refused" $O/*.log | cut -c1-200 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in state rule layer mix backbone passes; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== tiled vs CPU and vs SIMT, worst relative error over 32 cases (bound 1e-5)"
for w in "simt outputs" "simt state" "tiled outputs" "tiled state" "tiled vs simt outputs" "tiled vs simt state"; do
  grep -hE ": $w: relative error" $O/state.log | sed -E 's/.*relative error ([^ ]+).*/\1/' | sort -g | tail -1 | sed "s/^/$w: /"; done
echo "== rule and layer with the switch on (fast bound 1e-5 rule, 1e-4 layer; exact: its bits)"
grep -hE "^ *--- (PASS|FAIL): TestDeltaNet(ChunkRule|ChunkedLayer|MixBits)/(exact|fast) |^--- (PASS|FAIL): TestDeltaNetPromptPassBits " $O/rule.log $O/layer.log $O/mix.log | sed 's/^ *//'
echo "== fast backbone with the switch on vs CPU (bound 1e-4)"
grep -hE "(row prefill|steps|passes of [0-9]+) vs CPU: worst" $O/backbone.log $O/passes.log | sed -E 's/^ *[a-z_]+_test.go:[0-9]+: //; s/; worst against.*bits:/; bits:/' | cut -c1-110 | head -12
echo "== state pass alone, Drama 3 geometry (µs a layer; session 10 ncu: SIMT ≈ 136 at 300 rows)"; grep -h "^timing state" $O/state-timing.log
echo "== one layer's chunked mixer and rule (TestDeltaNetChunkTiming, µs a call)"
for v in simt tiled; do grep -h "^timing fast" $O/chunk-timing-$v.log | sed "s/^timing/$v/"; done
echo "== prefill 60 / 300 / 700 rows, fast (session 12 run 2: 19.18 / 40.69 / 92.91 ms)"
grep -hE "^rows" $O/bench-simt.log | head -1
for v in simt tiled simt2 tiled2; do grep -hE "^(60|300|700) " $O/bench-$v.log | sed "s/^/$v /"; done
