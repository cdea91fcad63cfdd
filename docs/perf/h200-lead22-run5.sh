#!/bin/bash
# Lead, session 22, run 5 (one call, ≤ 200 s): three more FP8 gate·up instances (t32r16u1, t64r8u1, t32r8u2)
# against ChooseGemv's (t32r4u4 at one and eight takes, t32r8u1 at two to four) under sm_90's conversion: their
# tests (every FP8 GEMV instance against the CPU, the routed and ids gate·up against each other), fast and exact,
# then bench-backbone at 1, 2, 4, 8 rows with PROSCENIUM_GPU_GEMV_FP8 = each, three times alternating.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run5.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run5 200 .carry-fa
F='^(TestGemvFP8|TestMoEGateUpRoute|TestMoEGateUpIdsMatchesRouted|TestMoEGateUpIdsTwins|TestExpertTable)$'
(cd engine/cuda && T 100 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 100 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
for i in 1 2 3; do for v in t32r4u4 t32r8u1 t32r16u1 t64r8u1 t32r8u2; do
	T 12 gu-$v-$i env PROSCENIUM_GPU_GEMV_FP8=$v $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
done; done
T 12 gu-default $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
run_pack
run_tally tests-fast tests-exact
grep -h "t32r16u1\|t64r8u1\|t32r8u2" $O/tests-fast.log | grep -- "--- " | head -8
for i in 1 2 3; do for v in t32r4u4 t32r8u1 t32r16u1 t64r8u1 t32r8u2; do echo "-- gate·up $v $i: $(grep -hE '^B =' $O/gu-$v-$i.log | cut -c1-40 | tr '\n' ' ')"; done; done
echo "-- default: $(grep -hE '^B =' $O/gu-default.log | cut -c1-40 | tr '\n' ' ')"
