#!/bin/bash
# rowstep27 (issue 27, several takes in one step), device run 1: the B-row step's tests and
# bench-backbone -rows. Run from the root of a checkout: bash .carry-rowstep27/run.sh
# The bundle (bundle.tar.xz) holds cuda.test and proscenium-gpu built at rowstep27 16f9f6c
# (`make kernels KERNEL_GENCODE='-gencode=arch=compute_90,code=sm_90'`, `go test -tags cuda -c
# -ldflags "-s -w" ./engine/cuda`, `go build -tags cuda -ldflags "-s -w" ./cmd/proscenium-gpu`)
# with the embedded engine/demo/codec.pth and qwen3/tokenizer.json.gz (11.6 MB) cut out
# (docs/perf/carry-strip.py; carry-splice.py is the bundle's splice.py); splice.py puts the checkout's copies back.
set -u
ROOT=$PWD; C=/tmp/rowstep27; O=$C/out; mkdir -p $C/bin $O
tar xJf .carry-rowstep27/bundle.tar.xz -C $C
for b in cuda.test proscenium-gpu; do python3 $C/splice.py $C/$b.stripped $C/$b.plan $C/bin/$b $ROOT; done
(cd $C/bin && sha256sum -c ../sums) || { echo "binaries did not splice back"; exit 1; }
chmod +x $C/bin/*
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
T 35 tests-kernels $C/bin/cuda.test -test.v -test.run 'TestGemvRowsMatchesOneRow|TestMoEDownRowsMatchesOneRow|TestDeltaNetStepRows|TestAttentionStepRows'
T 35 tests-rows-exact $C/bin/cuda.test -test.v -test.run 'TestBackboneStepRowsMatchTakesAlone'
PROSCENIUM_TEST_NUMERICS=fast T 35 tests-rows-fast $C/bin/cuda.test -test.v -test.run 'TestBackboneStepRowsMatchTakesAlone'
PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMVX_BANDWIDTH=1 T 25 gemvx-bandwidth-fast $C/bin/cuda.test -test.v -test.run 'TestGemvRowsBandwidth'
T 30 bench-rows-fast $C/bin/proscenium-gpu bench-backbone -synthetic full -numerics fast -steps 50 -rows 1,2,4,8
T 30 bench-rows-exact $C/bin/proscenium-gpu bench-backbone -synthetic full -numerics exact -steps 50 -rows 1,2,4,8
(cd $C && tar czf $OUT/rowstep27.tgz out)
