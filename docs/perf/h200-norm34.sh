#!/bin/bash
# norm34 (issue 27): the decode step's two one-block norm tails as sm_90 thread block clusters
# (kernels/backbone.cu add_rmsnorm_zc_cluster_fast, kernels/moe.cu moe_combine_norm_cluster_fast,
# kernels/row_norm.cuh ClusterSpan: a row's 2048 columns over 8 blocks of 256, each block's sum of
# squares pushed through distributed shared memory, one cluster barrier), chosen by
# PROSCENIUM_GPU_NORM_CLUSTER=1 (default off: add_rmsnorm_zc_fast, moe_combine_norm_fast, one block of
# 1024 threads a row) for fast numerics on sm_90 and launches of ≤ 8 rows; exact keeps its kernels.
# ≤ 60 s, from the root of a checkout of branch norm34 merged with main:
#   bash docs/perf/h200-norm34.sh BINDIR LOGDIR
# BINDIR holds cuda.test and proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh).
# Logs and norm34.tgz go to LOGDIR; a summary is printed (failures first).
# Hypotheses (docs/PERF.md "norm34"): (1) the cluster kernels are within 1e-6 of the CPU and of the
# one-block kernels (x of the add-norm exactly the CPU's), exact unchanged (the CPU's bits with the
# switch on), and the backbone with the switch on passes its fast tests (CPU, B rows against takes
# alone, PDL order, the MoE chain under PDL); (2) in a graph of the tails alone a launch ≈ 1–2 µs
# shorter; (3) the step ≈ 0.1–0.15 ms shorter at B = 1 (2.14 → ≈ 2.0 ms) and at B = 4 (3.55 → ≈ 3.4).
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
# Correctness, five processes at once (≤ 22 s): the kernels against the CPU and the one-block kernels
# (TestNormCluster) and the existing combine/add-norm tests with the switch on and off (both
# policies); with the switch on, fast: the backbone against the CPU, the B-row step against takes
# alone and the fused tails against the separate ones, PDL order, the MoE chain under PDL.
T 22 norm $C -test.v -test.run '^(TestNormCluster|TestNormClusterExistingTests|TestMoECombineNorm|TestBackboneRowsAndAddNorm)$' &
T 22 backbone env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_NORM_CLUSTER=1 $C -test.v -test.run '^TestBackboneMatchesCPU$' &
T 22 rows env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_NORM_CLUSTER=1 $C -test.v \
  -test.run '^(TestBackboneStepRowsMatchTakesAlone|TestFusedOutAddNorm|TestFusedDownCombine)$' &
T 22 pdl env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_NORM_CLUSTER=1 $C -test.v -test.run '^TestBackboneStepPDLOrder$' &
T 22 chain env PROSCENIUM_GPU_NORM_CLUSTER=1 $C -test.v -test.run '^TestMoEStepChainPDL$' &
wait
# Timing: the tails alone (80 in a graph, one-block against cluster, one process), then the step off
# against on, alternating (same synthetic weights in every process).
T 6 timing $C -test.v -test.run '^TestNormClusterTiming$'
cd $ROOT
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
i=0; for v in off on off on; do i=$(( i + 1 )); x=0; [ $v = on ] && x=1
  T 7 bench$i-$v env PROSCENIUM_GPU_NORM_CLUSTER=$x $P $BB
done
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/norm34.tgz)
echo "== norm34 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^--- FAIL|^    --- FAIL|^        --- FAIL|^FAIL|panic:|relative error .* >|differ from the cluster kernel|sent to the cluster kernels" $O/*.log | cut -c1-200 | head -12
for n in $(sed -nE 's/^rc=([1-9][0-9]*) ([a-z0-9-]+).*/\2/p' $O/steps.log); do echo "-- $n (rc $(sed -nE "s/^rc=([0-9]+) $n .*/\1/p" $O/steps.log)):"; tail -n 3 $O/$n.log | cut -c1-200; done
for f in norm backbone rows pdl chain; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail, $(grep -c -- '--- SKIP' $O/$f.log) skip"; done
echo "== TestNormCluster: worst relative error per check (≤ 1e-6; x of the add-norm 0)"
awk '/^=== (RUN|CONT)/{n=$3} /relative error/{split(n,p,"/"); k=$0; sub(/^ *[a-z_.]+:[0-9]+: /,"",k); sub(/: relative error.*/,"",k);
  for(i=1;i<NF;i++) if($i=="error"){v=$(i+1)+0; if(n ~ /^TestNormCluster\// && (!(k in m) || v>m[k])) m[k]=v}}
  END{for(k in m) printf "%-52s %.3g\n", k, m[k]}' $O/norm.log | sort
grep -hE "cluster against one-block" $O/norm.log | awk '{for(i=1;i<NF;i++) if($i=="max"){u=$(i+1)+0; if(u>m) m=u}}
  END{print "cluster against one-block: " NR " checks, normed values at most " m+0 " ULP apart"}'
echo "== exact, switch off and on (the CPU's bits)"; grep -hE "differ from the CPU's bits" $O/norm.log | grep -v "fast numerics" | awk '{d+=$0 ~ / 0\//?0:1} END{print NR " checks, " d " with differences"}'
echo "== backbone (switch on) against the CPU, fast"; grep -hE "steps vs CPU|as prefill vs as steps" $O/backbone.log | sed 's/^ *//' | cut -c1-110
echo "== B-row step (switch on) against takes alone"; grep -hE "steps \(slot" $O/rows.log | sed 's/^ *//' | cut -c1-120 | head -4
echo "== the tails alone (80 launches in a graph)"; grep -h "^norm34 timing" $O/timing.log | cut -c15-
for i in 1 2 3 4; do f=$(ls $O/bench$i-*.log 2>/dev/null) || continue; echo "== $(basename $f .log)"
  grep -hE "^B = |one take's Step" $f | sed -E 's/, [0-9.]+ ms wall//; s/ \(expected distinct experts\)//; s/; experts: per-pair GEMVs//' | cut -c1-150; done
