#!/bin/bash
# Lead, session 18, run 4 (one call, ≤ 280 s): run 3's kernels again on a fresh machine. The device tests
# under both policies (-test.short 'Test[^B]': every package test but the backbone's, which run 3 ran in
# full; the voice cache's memory checks, TestModelBytesMatchesTheLoad and the attention's among them),
# then alone the prefill three times, the voices and the take. Carried: .carry-fa. Logs: $OUT/run4.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run4 280 .carry-fa
(cd engine/cuda && T 190 tests-short $X/cuda.test -test.v -test.short -test.run 'Test[^B]') &
(cd engine/cuda && T 190 tests-short-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.short -test.run 'Test[^B]')
wait
for i in 1 2 3; do T 12 prefill$i $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
T 40 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
run_pack
run_tally tests-short tests-short-fast
grep -hE '^(=== RUN|--- (PASS|FAIL)).*(TestModelBytesMatchesTheLoad|TestFramesPrefixCacheMatchesUncached)' $O/tests-short.log $O/tests-short-fast.log | grep -- '---' | head -6
for i in 1 2 3; do echo "-- prefill$i"; grep -E '^(60|300|700) ' $O/prefill$i.log | cut -c1-40; done
for f in ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache" $O/$f.log | cut -c1-160; done
grep -hE "^take|takes after|first audio  |batch [14]|backbone step" $O/take.log | cut -c1-200
