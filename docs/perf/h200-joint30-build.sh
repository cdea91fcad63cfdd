#!/bin/bash
# joint30's device bundle: cuda.test, cuda-broken.test (slotLayer binding every take's mixers to
# slot 0: TestTakeFramesBeginTogether must fail), proscenium-gpu; stripped of the embedded demo
# files (docs/perf/carry-strip.py) and packed with xz into .carry-joint30/bundle.tar.xz.
set -eu
W=/work/wt/joint30; C=/work/main/.carry-joint30
cd $W
export GOTOOLCHAIN=go1.27.3
B=/tmp/joint30-bin; rm -rf $B; mkdir -p $B
nice go test -tags cuda -c -ldflags "-s -w" -o $B/cuda.test ./engine/cuda
cp engine/cuda/backbone_prefill_joint_cuda.go /tmp/joint30-keep.go
sed -i 's/off := int64(s) \* b.Plan.SlotBytes/off := int64(0) * int64(s) * b.Plan.SlotBytes \/\/ BROKEN on purpose/' engine/cuda/backbone_prefill_joint_cuda.go
grep -q "BROKEN on purpose" engine/cuda/backbone_prefill_joint_cuda.go
nice go test -tags cuda -c -ldflags "-s -w" -o $B/cuda-broken.test ./engine/cuda || true
cp /tmp/joint30-keep.go engine/cuda/backbone_prefill_joint_cuda.go
nice go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu
nice go test -tags cuda -c -ldflags "-s -w" -o $B/proscenium-gpu.test ./cmd/proscenium-gpu
d=$C; rm -rf $d/s; mkdir -p $d/s; : > $d/s/MANIFEST
for f in $B/cuda.test $B/cuda-broken.test $B/proscenium-gpu $B/proscenium-gpu.test; do
  n=$(basename $f)
  files=""; for e in engine/demo/codec.pth engine/demo/qwen3/tokenizer.json.gz; do python3 -c "import sys;sys.exit(0 if open('$e','rb').read() in open('$f','rb').read() else 1)" && files="$files $e"; done
  python3 docs/perf/carry-strip.py $f $d/s/$n $files > $d/s/$n.plan
  echo "$n $(sha256sum < $f | cut -d' ' -f1)" >> $d/s/MANIFEST
done
(cd $d/s && tar cf - . | xz -T2 -9e > ../bundle.tar.xz); rm -rf $d/s
git rev-parse --short HEAD > $d/REV
ls -la $d
