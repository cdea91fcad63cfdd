#!/bin/bash
# Session 24: bundle .carry-fo: proscenium-gpu of HEAD as it is (the code before a change under test), for an A/B
# in one call beside .carry-fa (h200-lead6-build.sh, built after the change). Kernels for sm_90.
set -eu
cd /work/main
export GOTOOLCHAIN=go1.27.3
nice make -B kernels KERNEL_GENCODE='-gencode=arch=compute_90,code=sm_90' > /tmp/old-kernels.log 2>&1
B=/tmp/old-bin; rm -rf $B; mkdir -p $B
go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu
d=.carry-fo; rm -rf $d; mkdir -p $d/s; : > $d/s/MANIFEST
f=$B/proscenium-gpu; n=proscenium-gpu; files=""
for e in engine/demo/codec.pth engine/demo/qwen3/tokenizer.json.gz; do python3 -c "import sys;sys.exit(0 if open('$e','rb').read() in open('$f','rb').read() else 1)" && files="$files $e"; done
python3 docs/perf/carry-strip.py $f $d/s/$n $files > $d/s/$n.plan
echo "$n $(sha256sum < $f | cut -d' ' -f1)" >> $d/s/MANIFEST
(cd $d/s && tar cf - . | xz -T2 -9 > ../bundle.tar.xz); rm -rf $d/s; echo "$(git rev-parse --short HEAD) old" > $d/REV; du -sh $d
