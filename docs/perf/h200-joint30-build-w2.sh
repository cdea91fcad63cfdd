#!/bin/bash
# joint30's W2 bundle: proscenium-gpu of joint30 (bench-take's begin breakdown), and of "combo" =
# joint30 + mixers28 as it stood (a scratch merge in /tmp/j30-combo, sm_90 kernels
# built there): combo-cuda.test, combo-proscenium-gpu, combo-proscenium-gpu.test. Stripped of the
# embedded demo files (docs/perf/carry-strip.py), packed with xz into .carry-joint30/bundle.tar.xz.
set -eu
W=/work/wt/joint30; K=/tmp/j30-combo; C=/work/main/.carry-joint30
export GOTOOLCHAIN=go1.27.3
B=/tmp/joint30-bin; rm -rf $B; mkdir -p $B
(cd $W && nice go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu)
(cd $K && nice go test -tags cuda -c -ldflags "-s -w" -o $B/combo-cuda.test ./engine/cuda)
(cd $K && nice go build -tags cuda -ldflags "-s -w" -o $B/combo-proscenium-gpu ./cmd/proscenium-gpu)
(cd $K && nice go test -tags cuda -c -ldflags "-s -w" -o $B/combo-proscenium-gpu.test ./cmd/proscenium-gpu)
cd $W
d=$C; rm -rf $d/s; mkdir -p $d/s; : > $d/s/MANIFEST
for f in $B/proscenium-gpu $B/combo-cuda.test $B/combo-proscenium-gpu $B/combo-proscenium-gpu.test; do
  n=$(basename $f)
  files=""; for e in engine/demo/codec.pth engine/demo/qwen3/tokenizer.json.gz; do python3 -c "import sys;sys.exit(0 if open('$e','rb').read() in open('$f','rb').read() else 1)" && files="$files $e"; done
  python3 docs/perf/carry-strip.py $f $d/s/$n $files > $d/s/$n.plan
  echo "$n $(sha256sum < $f | cut -d' ' -f1)" >> $d/s/MANIFEST
done
(cd $d/s && tar cf - . | xz -T2 -9e > ../bundle.tar.xz.tmp); rm -rf $d/s; mv $d/bundle.tar.xz.tmp $d/bundle.tar.xz
echo "joint30 $(git -C $W rev-parse --short HEAD); combo $(git -C $K rev-parse --short HEAD) = joint30 + mixers28 $(git -C $K rev-parse --short origin/mixers28)" > $d/REV.tmp; mv $d/REV.tmp $d/REV
cat $d/REV; ls -la $d
