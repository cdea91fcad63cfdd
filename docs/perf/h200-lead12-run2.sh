#!/bin/bash
# Lead, session 12, run 2 (one call, ≤ 420 s) on int12c = int12 (main + tower33 + dense33, the lean draw
# and two splits by default) + this session's helpers: f16p34 (the grouped FP8 experts in two FP16
# parts, PROSCENIUM_GPU_GEMM_F16=on, off by default), rows34 (the B-row step's routed experts by
# persistent warps, PROSCENIUM_GPU_MOE_ROWS=1, off by default), dsplit34 (split-K summed in z order:
# any count the same bits every run, "on" by default; the deep ring removed). Each helper's script
# (its checks, then its path timed against the old in one run), then everything new on together:
# the take at B = 1 and 4, the step at B = 1…8, the prefill, the voices.
# Carried: .carry-fa (h200-lead6-build.sh, GPU binaries only). Logs: $OUT/run2.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run2; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-420} ))
bash docs/perf/h200-lead6-unpack.sh .carry-fa $X >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu
T 80 f16p34 bash docs/perf/h200-f16p34.sh $X $O/f16p34
T 80 rows34 bash docs/perf/h200-rows34.sh $X $O/rows34
T 66 dsplit34 bash docs/perf/h200-dsplit34.sh $X $O/dsplit34
ON="PROSCENIUM_GPU_GEMM_F16=on PROSCENIUM_GPU_MOE_ROWS=1"
T 40 take-on env $ON $P bench-take -synthetic full -prompt 60 -frames 300 -takes 4 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
T 10 rows-on env $ON $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 10 prefill-on env $ON $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 20 ref10-on env $ON $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30-on env $ON $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
(cd /tmp && tar czf $OUT/run2.tgz --exclude=tokenizer.json run2)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
for h in f16p34 rows34 dsplit34; do echo "===== $h"; tail -n 34 $O/$h.log | cut -c1-230; done
echo "===== everything on"
grep -hE "^take |  frame|batch [14] |first audio  " $O/take-on.log | cut -c1-200
grep -hE "^B =" $O/rows-on.log | cut -c1-110; grep -E '^(60|300|700) ' $O/prefill-on.log
for f in ref10-on ref30-on; do echo "-- $f"; grep -hE "uncached|from the cache" $O/$f.log | cut -c1-160; done
