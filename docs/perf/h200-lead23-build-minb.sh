#!/bin/bash
# Session 23: bundles .carry-mb (-DMOE_DOWN2_MMA_MINB=4) and .carry-mc (-DMOE_DOWN2_MINB=4) of proscenium-gpu and
# cuda.test for run 5, as h200-lead22-build.sh with other nvcc flags; the kernels are rebuilt at the default last.
set -eu
cd /work/main
export GOTOOLCHAIN=go1.27.3
G='-gencode=arch=compute_90,code=sm_90'
F='-O3 -std=c++14 -Xptxas -warn-spills'
build() { # name flags
	local name=$1 flags=$2
	nice make -B kernels KERNEL_GENCODE="$G" NVCCFLAGS="$F $flags" > /tmp/minb-kernels-$name.log 2>&1
	B=/tmp/minb-$name; rm -rf $B; mkdir -p $B
	go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu
	go test -tags cuda -c -ldflags "-s -w" -o $B/cuda.test ./engine/cuda
	d=.carry-m$name; rm -rf $d; mkdir -p $d/s; : > $d/s/MANIFEST
	for f in $B/proscenium-gpu $B/cuda.test; do
		n=$(basename $f); files=""
		for e in engine/demo/codec.pth engine/demo/qwen3/tokenizer.json.gz; do python3 -c "import sys;sys.exit(0 if open('$e','rb').read() in open('$f','rb').read() else 1)" && files="$files $e"; done
		python3 docs/perf/carry-strip.py $f $d/s/$n $files > $d/s/$n.plan
		echo "$n $(sha256sum < $f | cut -d' ' -f1)" >> $d/s/MANIFEST
	done
	(cd $d/s && tar cf - . | xz -T2 -9 > ../bundle.tar.xz); rm -rf $d/s; echo "$(git rev-parse --short HEAD) $name $flags" > $d/REV; du -sh $d
}
build b "-DMOE_DOWN2_MMA_MINB=4"
build c "-DMOE_DOWN2_MINB=4"
nice make -B kernels KERNEL_GENCODE="$G" > /tmp/minb-kernels.log 2>&1
