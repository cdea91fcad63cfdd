#!/bin/bash
# Builds session 22's device bundles from /work/main (HEAD): .carry-fa and .carry-fb as h200-lead6-build.sh,
# then for each FP8 decode variant V given (kernels/common.cuh PROSCENIUM_FP8_DOT) a bundle .carry-vV of
# proscenium-gpu and cuda.test built with -DPROSCENIUM_FP8_DOT=V; the kernels are rebuilt at HEAD's default last.
# (The switch was e7614a2's; the final code names the integer path -DPROSCENIUM_FP8_INTEGER and has no third variant.)
#   bash docs/perf/h200-lead22-build.sh [V…]
set -eu
cd /work/main
export GOTOOLCHAIN=go1.27.3
G='-gencode=arch=compute_90,code=sm_90'
F='-O3 -std=c++14 -Xptxas -warn-spills'
rev=$(git rev-parse --short HEAD)
for v in "$@"; do
	nice make -B kernels KERNEL_GENCODE="$G" NVCCFLAGS="$F -DPROSCENIUM_FP8_DOT=$v" > /tmp/lead22-kernels-$v.log 2>&1
	B=/tmp/lead22-v$v; rm -rf $B; mkdir -p $B
	go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu
	go test -tags cuda -c -ldflags "-s -w" -o $B/cuda.test ./engine/cuda
	d=.carry-v$v; rm -rf $d; mkdir -p $d/s; : > $d/s/MANIFEST
	for f in $B/proscenium-gpu $B/cuda.test; do
		n=$(basename $f); files=""
		for e in engine/demo/codec.pth engine/demo/qwen3/tokenizer.json.gz; do python3 -c "import sys;sys.exit(0 if open('$e','rb').read() in open('$f','rb').read() else 1)" && files="$files $e"; done
		python3 docs/perf/carry-strip.py $f $d/s/$n $files > $d/s/$n.plan
		echo "$n $(sha256sum < $f | cut -d' ' -f1)" >> $d/s/MANIFEST
	done
	(cd $d/s && tar cf - . | xz -T2 -9 > ../bundle.tar.xz); rm -rf $d/s; echo "$rev fp8-dot $v" > $d/REV; du -sh $d
done
nice make -B kernels KERNEL_GENCODE="$G" > /tmp/lead22-kernels.log 2>&1
bash docs/perf/h200-lead6-build.sh
