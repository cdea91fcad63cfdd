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
. docs/perf/run-lib.sh
run_setup run2 420 .carry-fa
T 80 f16p34 bash docs/perf/h200-f16p34.sh $X $O/f16p34
T 80 rows34 bash docs/perf/h200-rows34.sh $X $O/rows34
T 66 dsplit34 bash docs/perf/h200-dsplit34.sh $X $O/dsplit34
ON="PROSCENIUM_GPU_GEMM_F16=on PROSCENIUM_GPU_MOE_ROWS=1"
T 40 take-on env $ON $P bench-take -synthetic full -prompt 60 -frames 300 -takes 4 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
T 10 rows-on env $ON $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 10 prefill-on env $ON $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 20 ref10-on env $ON $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30-on env $ON $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
run_pack
run_tally
for h in f16p34 rows34 dsplit34; do echo "===== $h"; tail -n 34 $O/$h.log | cut -c1-230; done
echo "===== everything on"
grep -hE "^take |  frame|batch [14] |first audio  " $O/take-on.log | cut -c1-200
grep -hE "^B =" $O/rows-on.log | cut -c1-110; grep -E '^(60|300|700) ' $O/prefill-on.log
for f in ref10-on ref30-on; do echo "-- $f"; grep -hE "uncached|from the cache" $O/$f.log | cut -c1-160; done
