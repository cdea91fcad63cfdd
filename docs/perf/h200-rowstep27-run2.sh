#!/bin/bash
# rowstep27 (issue 27, several takes in one step), device run 2 (binaries of rowstep27 d518d59):
# the B-row kernels' and step's tests under both policies, the one-take backbone against the CPU
# (exact: B = 1 unchanged), the several-row projections' bandwidth, bench-backbone -rows.
# Run from the root of a checkout: bash .carry-rowstep27/run.sh (bundle as in h200-rowstep27-run1.sh)
# The bundle's binaries had engine/demo/codec.pth and qwen3/tokenizer.json.gz (embedded, 11.6 MB)
# cut out; splice.py puts this checkout's copies back and sha256sum checks the result.
set -u
ROOT=$PWD; C=/tmp/rowstep27; O=$C/out; rm -rf $C; mkdir -p $C/bin $O
tar xJf .carry-rowstep27/bundle.tar.xz -C $C
for b in cuda.test proscenium-gpu; do python3 $C/splice.py $C/$b.stripped $C/$b.plan $C/bin/$b $ROOT; done
(cd $C/bin && sha256sum -c ../sums) || { echo "binaries did not splice back"; exit 1; }
chmod +x $C/bin/*
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
T 25 tests-kernels $C/bin/cuda.test -test.v -test.run 'TestGemvRowsMatchesOneRow/exact|TestMoEDownRowsMatchesOneRow|TestDeltaNetStepRows|TestAttentionStepRows|TestMoEDown$'
T 20 tests-gemvx-fast $C/bin/cuda.test -test.v -test.run 'TestGemvRowsMatchesOneRow/fast'
T 20 tests-rows-exact $C/bin/cuda.test -test.v -test.run 'TestBackboneStepRowsMatchTakesAlone'
PROSCENIUM_TEST_NUMERICS=fast T 20 tests-rows-fast $C/bin/cuda.test -test.v -test.run 'TestBackboneStepRowsMatchTakesAlone|TestFused'
T 45 tests-backbone-exact $C/bin/cuda.test -test.v -test.run 'TestBackboneMatchesCPU'
PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMVX_BANDWIDTH=1 T 20 gemvx-bandwidth-fast $C/bin/cuda.test -test.v -test.run 'TestGemvRowsBandwidth'
T 20 bench-rows-fast $C/bin/proscenium-gpu bench-backbone -synthetic full -numerics fast -steps 50 -rows 1,2,3,4,8
PROSCENIUM_GPU_GEMVX=mma T 20 bench-rows-fast-mma $C/bin/proscenium-gpu bench-backbone -synthetic full -numerics fast -steps 50 -rows 2,4,8
T 20 bench-rows-exact $C/bin/proscenium-gpu bench-backbone -synthetic full -numerics exact -steps 50 -rows 1,2,4,8
(cd $C && tar czf $OUT/rowstep27.tgz out)
echo "== steps"; grep -E "^rc=" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|    --- FAIL|panic" $O/tests-*.log | head -20
echo "== top-level tests"; grep -hE "^--- (PASS|FAIL|SKIP)" $O/tests-*.log | sort | uniq -c
echo "== rows vs alone (values differing, worst)"; grep -hoE "take [0-9] (prompt|steps) \(slot [0-9]\): [0-9]+ of [0-9]+ values differ.*" $O/tests-rows-*.log | awk '{print $6, $NF}' | sort | uniq -c
echo "== backbone vs CPU (exact)"; grep -hE "values differ|bits:" $O/tests-backbone-exact.log | sed 's/^ *//' | cut -c1-160 | head -12
echo "== bench"; cat $O/bench-rows-fast.log $O/bench-rows-fast-mma.log $O/bench-rows-exact.log | tail -24
echo "== gemvx bandwidth (fast)"; grep -hE "gemvx .* B=" $O/gemvx-bandwidth-fast.log | sed 's/^.*gemvx \(.*\)$/\1/' | head -100
