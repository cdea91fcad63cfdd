#!/bin/bash
# Ran once, in session 13 run 4 on int13c ba3c063. Its prep and norm kernels (=new) measured slower and
# were removed from main (code on branch dnc13): this script is the record of that run.
# dnc13 (issue 28): the fast chunked DeltaNet prefill's prep, intra and norm kernels
# (kernels/deltanet_chunk.cu, fast only; exact keeps its kernels): deltanet_chunk_intra_tiled (grid
# (nv, chunks, 3) of 128 threads, only the three 32 × 32 quadrants on or below the diagonal, a thread
# a 4 × 4 tile of q·k or k·k from float4 shared loads; the decay the old chain), deltanet_chunk_prep_rows
# (a block a key head and 8 rows, q/k once for both value heads, no barrier; old: a block a value
# head and row) and deltanet_chunk_norm_warp (a warp a row and head; old: a block).
# PROSCENIUM_GPU_DN_CHUNK (engine/cuda deltanet_chunk_intra.go): unset = old
# (deltaNetChunkNewDefault = false, the one-line flip), "new" the three new kernels.
# ≤ 60 s, from the root of a checkout of branch dnc13 (merged with main):
#   bash docs/perf/h200-dnc13.sh BINDIR OUTDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and dnc13.tgz go to OUTDIR; a summary is printed.
# Hypotheses (docs/PERF.md "dnc13"): (1) new within 1e-5 of the CPU's chunked form and of the old
# kernels at 1 … 700 rows (cum the old bits; the host emulation docs/perf/dnc13-emu finds the rule
# ≤ 1e-6 of a float64 one, as the old, prep the old bits), exact unchanged, the fast backbone within
# 1e-4; (2) per layer at 300 rows intra ≈ 54 → ≈ 8 µs, prep 34 → ≈ 6, norm 17 → ≈ 5 (the mixer
# ≈ 162 → ≈ 80 µs); the prefill ≈ −2.5 ms at 300 rows (≈ 34.5 ms), ≈ −5.8 at 700 (≈ 67 ms).
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
# Correctness, six processes at once (≤ 32 s): new against old and the CPU in one process (the rule
# 1 … 700 rows, four geometries, qm/am/cum compared, outputs NaN-poisoned; whole layers old vs new); with the switch on, the rule
# under both policies (exact must keep the CPU's bits), the chunked layer under fast, the mixer's
# bits tests, the fast backbone (TestBackboneMatchesCPU, TestBackbonePrefillPassesMatchCPU).
export PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_DN_CHUNK=new
T 32 passes $C -test.v -test.run 'TestBackbonePrefillPassesMatchCPU$' &
T 28 backbone $C -test.v -test.run 'TestBackboneMatchesCPU$' &
T 28 intra $C -test.v -test.run 'TestDeltaNetChunkIntraTiled$|TestDeltaNetChunkNewLayer$' &
T 28 rule $C -test.v -test.run 'TestDeltaNetChunkRule$' &
T 28 layer $C -test.v -test.run 'TestDeltaNetChunkedLayer$/^fast$' &
T 28 mix $C -test.v -test.run 'TestDeltaNetMixBits$|TestDeltaNetPromptPassBits$' &
wait
unset PROSCENIUM_GPU_DN_CHUNK
# Timing, one at a time: one layer's chunked mixer, rule and intra launch old and new in one process
# (TestDeltaNetChunkTiming, 60/300/700 rows, both policies), then the prefill with
# PROSCENIUM_GPU_PREFILL_PLAN=auto off, on, off, on (the last skipped if the time is out).
BB() { (cd $ROOT && T 7 bench-$1 env PROSCENIUM_GPU_PREFILL_PLAN=auto PROSCENIUM_GPU_DN_CHUNK=${1%2} $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700); }
T 8 chunk-timing $C -test.v -test.run 'TestDeltaNetChunkTiming$'
BB old; BB new; BB old2; BB new2
cd $ROOT
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/dnc13.tgz)
echo "== dnc13 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^ +--- FAIL|^FAIL|panic:" $O/*.log | cut -c1-200 | head -6
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in intra rule layer mix backbone passes; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail"; done
echo "== new vs CPU and vs old, worst relative error (rule 40 cases, layer 14; bound 1e-5)"
for w in "old outputs" "new outputs" "new state" "new vs old outputs" "new vs old state" "qm" "am" "new vs old recurrent state"; do
  grep -hE ": $w: relative error" $O/intra.log | sed -E 's/.*relative error ([^ ]+).*/\1/' | sort -g | tail -1 | sed "s/^/$w: /"; done
echo "== rule and layer with the switch on (fast bound 1e-5 rule, 1e-4 layer; exact: its bits)"
grep -hE "^ *--- (PASS|FAIL): TestDeltaNet(ChunkRule|ChunkedLayer|MixBits)/(exact|fast) |^--- (PASS|FAIL): TestDeltaNetPromptPassBits " $O/rule.log $O/layer.log $O/mix.log | sed 's/^ *//'
echo "== fast backbone with the switch on vs CPU (bound 1e-4)"
grep -hE "(row prefill|steps|passes of [0-9]+) vs CPU: worst" $O/backbone.log $O/passes.log | sed -E 's/^ *[a-z_]+_test.go:[0-9]+: //; s/; worst against.*bits:/; bits:/' | cut -c1-110 | head -6
echo "== one layer, Drama 3 geometry (TestDeltaNetChunkTiming, µs a call, old → new; ncu session 12 at 300 rows: intra ≈ 54, prep 34, norm 17)"
grep -h "^timing fast" $O/chunk-timing.log | sed -nE 's/^timing fast +deltanet chunk(ed)? ([a-z]+) .*(old|new), ([0-9]+) rows +([0-9.]+) µs.*/\4 \2 \3 \5/p' |
  awk '{v[$1" "$2" "$3]=$4; r[$1]=1} END {for (n in r) printf "%s rows: mixer %s → %s, rule %s → %s, intra %s → %s\n", n, v[n" mixer old"], v[n" mixer new"], v[n" rule old"], v[n" rule new"], v[n" intra old"], v[n" intra new"]}' | sort -n
grep -h "^timing exact" $O/chunk-timing.log | grep '300 rows' | head -1
echo "== prefill ms 60 / 300 / 700 rows, fast, PREFILL_PLAN=auto (old ≈ 18.5 / 37 / 72.5)"
for v in old new old2 new2; do echo "$v $(grep -hE '^(60|300|700) ' $O/bench-$v.log | awk '{printf "%s ", $2}')"; done
