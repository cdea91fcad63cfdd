#!/bin/bash
# Lead's final run, part C (session 5): the fused step's tests, the device tests under both
# policies again on the final tree, benches fused/unfused and several takes at once.
# Carry .carry-c (bundle.tar.xz: cuda.test, proscenium-gpu) and run from the checkout's root.
set -u
TAG=${1:-c}; ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/$TAG; mkdir -p $O $X
(cd $X && tar xJf $ROOT/.carry-c/bundle.tar.xz)
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
unset PROSCENIUM_GPU_FUSED
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
T 90 tests-fused $X/cuda.test -test.v -test.run 'TestFused'
T 150 tests-backbone-exact $X/cuda.test -test.v -test.run 'TestBackbone|TestTowerFrames'
PROSCENIUM_TEST_NUMERICS=fast T 150 tests-backbone-fast $X/cuda.test -test.v -test.run 'TestBackbone|TestTowerFrames|TestMixerStepGraph|TestDeltaNetLayer|TestAttentionLayer'
T 200 tests-other $X/cuda.test -test.v -test.short -test.run 'Test[^B]'
T 60 bench-backbone $X/proscenium-gpu bench-backbone --synthetic full --json -numerics fast
T 60 bench-backbone-fused $X/proscenium-gpu bench-backbone --synthetic full --json -numerics fast -fused
T 60 bench-take $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast
T 60 bench-take-fused $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast -fused
T 150 bench-take-batch $X/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 200 -takes 2 -numerics fast -batch 1,2,4,8
(cd /tmp && tar czf $OUT/$TAG.tgz $TAG)
