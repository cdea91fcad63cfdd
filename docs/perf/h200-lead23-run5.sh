#!/bin/bash
# Lead, session 23, run 5 (one call, ≤ 240 s): the step's down projections at four blocks a multiprocessor
# instead of three (bytes in flight: the B-row down streams 2 TB/s). Bundles: a = HEAD's kernels (.carry-fa),
# b = -DMOE_DOWN2_MMA_MINB=4 (moe_down2_mma_fast, the B-row step's, bounded to 64 registers), c =
# -DMOE_DOWN2_MINB=4 (moe_down2_fast too: the one-take step's). Each spills a few hundred bytes at that bound
# (ptxas). The down projections' and the B-row step's tests under fast with b; then alone
# TestMoEDown2Timing with a and b (.carry-mc holds proscenium-gpu only: the 64 MiB of tree and carries), bench-backbone at 1, 2, 4, 8 rows alternating a / b / c three times, the take
# (B = 1, 4) with each. Carried: .carry-fa, .carry-mb, .carry-mc (h200-lead23-build-minb.sh, as h200-lead22-build.sh
# with other nvcc flags). Logs: $OUT/run5.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run5 240 .carry-fa
for v in b c; do mkdir -p $X/$v; bash docs/perf/h200-lead6-unpack.sh .carry-m$v $X/$v >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }; done
declare -A PG=([a]=$P [b]=$X/b/proscenium-gpu [c]=$X/c/proscenium-gpu) CT=([a]=$X/cuda.test [b]=$X/b/cuda.test [c]=$X/c/cuda.test)
F='^(TestMoEDown2MMA|TestMoEDown2MMAExpertTable|TestMoEDownRowsMatchesOneRow|TestMoEDown2MatchesMoEDown|TestMoEDown|TestExpertTable|TestBackboneStepRowsMatchTakesAlone|TestBackboneMatchesCPU)$'
for v in b; do (cd engine/cuda && T 90 tests-$v env PROSCENIUM_TEST_NUMERICS=fast ${CT[$v]} -test.v -test.run "$F") & done
wait
for v in a b; do (cd engine/cuda && T 30 timing-$v env PROSCENIUM_TEST_NUMERICS=fast ${CT[$v]} -test.v -test.run '^TestMoEDown2Timing$'); done
for i in 1 2 3; do for v in a b c; do
	T 12 rows-$v-$i ${PG[$v]} bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
done; done
for v in a b c; do
	T 30 take-$v ${PG[$v]} bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -batch 1,4 -seed-base 3 -numerics fast
done
run_pack
run_tally tests-b
for v in a b; do echo "-- timing $v"; grep -h '^timing\|µs' $O/timing-$v.log | head -8 | cut -c1-140; done
for i in 1 2 3; do for v in a b c; do echo "-- rows $v $i: $(grep -hE '^B =' $O/rows-$v-$i.log | cut -c1-20 | tr '\n' ' ')"; done; done
for v in a b c; do echo "-- take $v"; grep -hE "^take|takes' codes|batch [14]" $O/take-$v.log | cut -c1-200; done
