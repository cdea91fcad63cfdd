#!/bin/bash
# dn32 (issues 27, 30): the decode step's Gated-DeltaNet update in one launch a layer
# (kernels/deltanet.cu deltanet_step_cluster_fast and _slots_fast: a head's 128 value columns over a
# thread block cluster of 8 blocks, the gated norm through distributed shared memory), chosen by
# PROSCENIUM_GPU_DN_CLUSTER=1 (default off: the split pair deltanet_step_cols + deltanet_step_norm).
# Fast numerics on sm_90 only; exact keeps the split kernels. ≤ 60 s, from the root of a checkout of
# branch dn32 merged with main:
#   bash docs/perf/h200-dn32.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and dn32.tgz go to LOGDIR; a summary is printed (failures first).
# Hypotheses (docs/PERF.md "dn32"): (1) the cluster step is within 1e-5 of the split kernels (one row
# and B rows, outputs and states, several steps) and within the existing bounds of the CPU (mixer
# 1e-5, layer and backbone 1e-4); exact is untouched (TestDeltaNetMixBits/exact/*/cluster: the CPU's
# bits through the split kernels); (2) a layer's update alone (ncu) ≈ 14 → ≈ 5 µs at B = 1 and ≈ 18 →
# ≈ 7 µs at B = 4; in TestDeltaNetClusterTiming's graph of 30 layers (PDL hiding launch costs) ≈ 8 µs
# a layer less at B = 1, ≈ 10 at B = 4; (3) the step ≈ 0.2 ms shorter at B = 1 (2.24 → ≈ 2.0 ms) and
# ≈ 0.25–0.3 ms at B = 4 (4.0 → ≈ 3.7 ms), 383 → 353 launches.
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
# Correctness, six processes at once (≤ 22 s), only the subtests that run the cluster step: cluster
# against split (TestDeltaNetClusterStep); "cluster" of deltaNetSteps against the CPU (the layer, a
# captured step; the mixer alone under both policies: exact runs the split kernels, their bits); with
# the switch on, the B-row step against takes alone, the fused step's launch count, the whole fast
# backbone against the CPU, PDL order.
T 22 cluster env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run '^TestDeltaNetClusterStep$' &
T 22 layer env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run '^(TestDeltaNetLayer|TestMixerStepGraph)$/^(full|odd)$/^cluster$' &
T 22 mixbits $C -test.v -test.run '^TestDeltaNetMixBits$/^(exact|fast)$/^(full|odd)$/^cluster$' &
T 22 rows env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_DN_CLUSTER=1 $C -test.v \
  -test.run '^(TestDeltaNetStepRows|TestBackboneStepRowsMatchTakesAlone|TestFusedStep|TestFusedDeltaNetStep)$' &
T 22 backbone env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_DN_CLUSTER=1 $C -test.v -test.run '^TestBackboneMatchesCPU$' &
T 22 pdl env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_DN_CLUSTER=1 $C -test.v -test.run '^TestBackboneStepPDLOrder$' &
wait
# Timing: the mixer alone (30 layers in a graph, split against cluster, one process), then the step
# old against new, alternating (same synthetic weights in every process since dc9e1b4).
T 6 timing $C -test.v -test.run '^TestDeltaNetClusterTiming$'
cd $ROOT
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
i=0; for v in old new old new; do i=$(( i + 1 )); x=0; [ $v = new ] && x=1
  T 7 bench$i-$v env PROSCENIUM_GPU_DN_CLUSTER=$x $P $BB
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/dn32.tgz)
echo "== dn32 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^        --- FAIL|^FAIL|panic:|relative error .* >|would not run|launches, want" $O/*.log | cut -c1-200 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in cluster layer mixbits rows backbone pdl; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail, $(grep -c -- '--- SKIP' $O/$f.log) skip"; done
echo "== worst relative error per cluster subtest (cluster vs split ≤ 1e-5; mixer vs CPU ≤ 1e-5; layer, graph ≤ 1e-4)"
awk '/^=== (RUN|CONT)/{n=$3} /relative error/{for(i=1;i<NF;i++) if($i=="error"){v=$(i+1)+0; if(n ~ /[Cc]luster/ && (!(n in m) || v>m[n])) m[n]=v}}
  END{for(k in m) printf "%-48s %.3g\n", k, m[k]}' $O/cluster.log $O/layer.log $O/mixbits.log $O/rows.log | sort | head -20
echo "== backbone (switch on) against the CPU, fast"; grep -hE "steps vs CPU|as prefill vs as steps" $O/backbone.log | sed 's/^ *//' | cut -c1-110
echo "== B-row step (switch on) against takes alone"; grep -hE "steps \(slot" $O/rows.log | sed 's/^ *//' | cut -c1-120 | head -4
echo "== the mixer alone, a layer (30 in a graph; target ≤ 5 µs at B = 1, ≤ 7 µs at B = 4)"; grep -h "^dn32 timing" $O/timing.log | cut -c13-
for i in 1 2 3 4; do f=$(ls $O/bench$i-*.log 2>/dev/null) || continue; echo "== $(basename $f .log)"
  grep -hE "^B = |one take's Step" $f | sed -E 's/, [0-9.]+ ms wall//; s/ \(expected distinct experts\)//; s/; experts: per-pair GEMVs//' | cut -c1-150; done
