#!/bin/bash
# speed helper: one device run. Usage (repo root): bash .carry-speed/run.sh
R=$PWD; C=$R/.carry-speed; cd $C && tar xJf bundle.tar.xz || { echo unpack failed > $OUT/rc.txt; exit 1; }
T0=$(date +%s); el() { echo "== $1 at $(( $(date +%s) - T0 )) s" >> $OUT/times.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $OUT/gpu.txt 2>&1
S='fp8=st32r4u4,fp8:512=st32r8u1,bf16=st128r2u2,bf16:512=st32r4u2'
el unit
timeout 40 ./cuda.test -test.short -test.v -test.run 'TestGemv|TestGemm|TestMoEDown|TestDependentChain|TestMoERows' > $OUT/unit.log 2>&1; echo "unit rc $?" >> $OUT/rc.txt
el golden
export PROSCENIUM_GPU_CKPTS=$R/engine/cpu/testdata/backbone/ckpt
timeout 15 ./cuda.test -test.short -test.v -test.run 'TestBackboneMatchesCPU|TestBackboneMoE' > $OUT/golden.log 2>&1; echo "golden rc $?" >> $OUT/rc.txt
PROSCENIUM_GPU_GEMV64=$S timeout 15 ./cuda.test -test.short -test.v -test.run 'TestBackboneMatchesCPU' > $OUT/golden-staged.log 2>&1; echo "golden-staged rc $?" >> $OUT/rc.txt
el bench
timeout 20 ./proscenium-gpu bench-backbone -synthetic full -json > $OUT/bench-new.json 2> $OUT/bench-new.err; echo "bench-new rc $?" >> $OUT/rc.txt
timeout 20 ./proscenium-gpu.old bench-backbone -synthetic full -json > $OUT/bench-old.json 2> $OUT/bench-old.err; echo "bench-old rc $?" >> $OUT/rc.txt
PROSCENIUM_GPU_GEMV64=$S timeout 20 ./proscenium-gpu bench-backbone -synthetic full -json > $OUT/bench-staged.json 2> $OUT/bench-staged.err; echo "bench-staged rc $?" >> $OUT/rc.txt
el bw
PROSCENIUM_BANDWIDTH_JSON=$OUT/bw.json PROSCENIUM_BANDWIDTH_ONLY='^(2048→8192/bf16|4096→2048/bf16|.*experts.*/fp8)/f64' timeout 30 ./cuda.test -test.v -test.timeout 60s -test.run 'TestBandwidth' > $OUT/bw.log 2>&1; echo "bw rc $?" >> $OUT/rc.txt
el timing
timeout 15 ./cuda.test -test.v -test.run 'TestMixerTiming' > $OUT/timing.log 2>&1; echo "timing rc $?" >> $OUT/rc.txt
el ncu
N="ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv"
timeout 20 $N ./proscenium-gpu bench-backbone -synthetic full -profile-step > $OUT/ncu-step-new.csv 2>&1; echo "ncu-new rc $?" >> $OUT/rc.txt
timeout 20 $N ./proscenium-gpu.old bench-backbone -synthetic full -profile-step > $OUT/ncu-step-old.csv 2>&1; echo "ncu-old rc $?" >> $OUT/rc.txt
PROSCENIUM_GPU_GEMV64=$S timeout 20 $N ./proscenium-gpu bench-backbone -synthetic full -profile-step > $OUT/ncu-step-staged.csv 2>&1; echo "ncu-staged rc $?" >> $OUT/rc.txt
el end
