#!/bin/bash
# flash28's device run (≤ 90 s; from the root of a checkout of branch flash28):
#   bash docs/perf/h200-flash28.sh BINDIR OUTDIR
# BINDIR holds cuda.test and proscenium-gpu built from the same checkout with sm_90 kernels
# (docs/perf/h200-flash28-build.sh BINDIR, or the lead's h200-lead6-build.sh steps); OUTDIR
# gets one log per step and steps.log. What it shows:
#   1. the flash prompt attention (attn_flash_fast + its combine) against the CPU under fast
#      (TestAttentionFlash: passes of 1, 63, 64, 300, 512 rows after a 100-row prefix, full and
#      odd geometry, at the backbone's splits, one split and the most), exact refused, and the
#      attention layer under both policies (TestAttentionLayer: fast runs its prefills flash);
#   2. the backbone against the CPU under fast (the 300-row prefill through the flash core) and
#      exact (the CPU's bits, the core blocks unchanged), two passes (512 + 273 rows) under fast, and
#      a take from a cached voice against the same take uncached under fast (flash and blocks);
#   3. the kernel-level time of a pass's attention core, flash against the 64-row blocks
#      (TestAttentionFlashTiming), then bench-backbone -prefills 60,300,700 with the flash core and
#      with PROSCENIUM_GPU_ATTN_FLASH=0 (the blocks), fast numerics.
set -u
B=$1; O=$2; ROOT=$PWD; mkdir -p $O
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
export PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt \
  PROSCENIUM_TINY_TOKENIZER=$O/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
END=$(( $(date +%s) + 86 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?; echo "rc=$rc $n" >> $O/steps.log; return $rc; }
C=$B/cuda.test; P=$B/proscenium-gpu
{ date -u; git rev-parse --short HEAD; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
# Checks, three at once (the CPU references share the host's cores).
T 28 flash $C -test.v -test.run 'TestAttentionFlash$|TestAttentionFlashRefusesExact|TestAttentionLayer$|TestFlash' &
T 28 backbone-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestBackboneMatchesCPU$' &
T 28 backbone-exact $C -test.v -test.run 'TestBackboneMatchesCPU$' &
wait
# Two passes (the second after 512 cached rows), and a script after a cached voice against the
# same prompt uncached (fast: the flash core must give the same bits both ways; its blocks twin
# shows whether fast held it before).
T 20 passes-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestBackbonePrefillPassesMatchCPU$' &
T 20 prefix-fast env PROSCENIUM_TEST_NUMERICS=fast $C -test.v -test.run 'TestFramesPrefixCacheMatchesUncached$' &
T 20 prefix-fast-blocks env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_ATTN_FLASH=0 $C -test.v -test.run 'TestFramesPrefixCacheMatchesUncached$' &
wait
# Timings, one at a time.
T 10 timing $C -test.v -test.run 'TestAttentionFlashTiming$'
T 9 bench-flash $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 9 bench-blocks env PROSCENIUM_GPU_ATTN_FLASH=0 $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
echo "== flash28 steps"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -HE "^--- FAIL|^    --- FAIL|^        --- FAIL|^FAIL|panic:" $O/flash.log $O/backbone-*.log $O/passes-fast.log $O/prefix-fast*.log 2>/dev/null | sed "s|^$O/||" | head -14
grep -E "^rc=[1-9]" $O/steps.log | while read rc n; do echo "-- $n ($rc), last lines:"; tail -n 3 $O/$n.log | cut -c1-160; done
echo "== prefix cache under fast (flash / blocks)"; for f in prefix-fast prefix-fast-blocks; do echo "$f: $(grep -hE '^(--- )?(PASS|FAIL|ok)' $O/$f.log | tail -n 2 | tr '\n' ' ')"; done
echo "== flash vs CPU (bounds: 1e-5 the whole output, 1e-4 each vector)"
awk '/attention_flash_cuda_test.go:[0-9]+: call .*relative error/ { for (i = 1; i < NF; i++) if ($i == "error") { v = $(i+1) + 0; if (v > w) w = v } }
     /attention_flash_cuda_test.go:[0-9]+: call .*worst vector/ { v = $NF + 0; if (v > x) x = v; n++ }
     END { printf "calls checked %d; worst whole-output error %.3g; worst vector %.3g\n", n, w, x }' $O/flash.log
grep -hE "^ *--- (PASS|FAIL)" $O/flash.log | sed 's/^ *//' | head -16
echo "== backbone vs CPU (fast bound 1e-4; exact: 0 values differ)"
grep -hE "(prefill|steps|passes of [0-9]+) vs CPU: worst" $O/backbone-fast.log $O/backbone-exact.log $O/passes-fast.log 2>/dev/null |
  sed -E 's/^ *[a-z_]+_test.go:[0-9]+: //; s/; worst against.*bits:/; bits:/' | cut -c1-110 | head -20
echo "== attention core timing (fast, full geometry)"; grep -h "^timing attention core" $O/timing.log
echo "-- bench flash"; tail -n 4 $O/bench-flash.log
echo "-- bench blocks (PROSCENIUM_GPU_ATTN_FLASH=0)"; tail -n 4 $O/bench-blocks.log
