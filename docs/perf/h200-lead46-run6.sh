#!/bin/bash
# Lead, session 46, run 6 — RUN at 09:59 UTC on an H100 (bundles at b1f4a35; results in PERF "Session 46"). One call, ≤ 120 s or $BUDGET: the worker's whole GPU test binary at the session's final
# GPU code (886577f: the tower-table helper shared by TestCUDAEngineTiers and TestCUDAExpertCacheHotSet, after run 4).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run6 ${BUDGET:-120} .carry-fa .carry-fb
(cd cmd/proscenium-gpu && T 110 engine-all $X/proscenium-gpu.test -test.v -test.run .)
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally engine-all
grep -h -B2 -A6 "^--- FAIL\|^    --- FAIL" $O/engine-all.log | cut -c1-300 | head -30
grep -h "no size asked\|expert_cache_cuda_test" $O/engine-all.log | cut -c1-200
