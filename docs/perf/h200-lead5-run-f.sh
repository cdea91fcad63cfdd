#!/bin/bash
# Lead's product run (session 5): serve at full geometry (make-tiny --geometry full on the
# device's disk) — a cloned voice's first and later requests, four concurrent requests.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/f; mkdir -p $O $X
(cd $X && tar xJf $ROOT/.carry-f/bundle.tar.xz)
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export LD_LIBRARY_PATH=$X/lib PROSCENIUM_GPU_WORKER=$X/proscenium-gpu
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; df -h /tmp | tail -1; } > $O/machine.txt 2>&1
( time $X/proscenium make-tiny /tmp/full --geometry full ) > $O/make-full.log 2>&1
XDG_DATA_HOME=/tmp/xdgf $X/proscenium serve --model /tmp/full --backend cuda --batch 4 --port 18100 --settings "" > $O/serve.log 2>&1 &
sp=$!
t0=$(date +%s)
for i in $(seq 150); do
  curl -s -X POST -H 'Content-Type: application/json' -d '[]' http://127.0.0.1:18100/api/ModelStatus > $O/status.json 2>/dev/null
  grep -q '"loaded"' $O/status.json && break; sleep 0.5; done
echo "model loaded after $(( $(date +%s) - t0 )) s: $(head -c 300 $O/status.json)" > $O/product.log
python3 $ROOT/.carry-f/product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav >> $O/product.log 2>&1
python3 $ROOT/.carry-f/concurrent.py 18100 4 > $O/concurrent.log 2>&1; python3 $ROOT/.carry-f/concurrent.py 18100 4 >> $O/concurrent.log 2>&1
kill $sp; wait $sp 2>/dev/null
cp $O/*.log $O/*.txt $OUT/ 2>/dev/null
cat $O/make-full.log | tail -4; cat $O/product.log; cat $O/concurrent.log; tail -5 $O/serve.log
