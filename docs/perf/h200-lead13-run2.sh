#!/bin/bash
# Lead, session 13, run 2 (one call, ≤ 330 s) on int13a = main (tie13 merged: no GPU code) + gemvx13
# (the split tensor-core projection, PROSCENIUM_GPU_GEMVX_SPLIT, off by default) + pass13 (the prefill
# pass from the memory plan, PROSCENIUM_GPU_PREFILL_PLAN=auto, off by default; moe_group up to 16 384
# pairs). Each script: its checks, its new path timed against the old in one run.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run2.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2 330 .carry-fa
T 95 gemvx13 bash docs/perf/h200-gemvx13.sh $X $O/gemvx13
T 80 pass13 bash docs/perf/h200-pass13.sh $X $O/pass13
T 75 tie13 bash docs/perf/h200-tie13.sh $X $O/tie13
run_pack
run_tally
for h in gemvx13 pass13 tie13; do echo "===== $h"; tail -n 30 $O/$h.log | cut -c1-220; done
