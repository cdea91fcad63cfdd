#!/bin/bash
# Lead, session 43, run 1 (one call, ≤ 480 s or $BUDGET): what session 42 did not run on a GPU, on session 42's
# final code with one kernel change (the exact GEMMs' shared tile loader, gemm.cu). In order, so that a short budget
# leaves out the last: the exact GEMM tests (the FP64 instances against the CPU's bits) and every kernel's test
# (kernels.test) while a full-size checkpoint is written; the review's worker change (6e70ad7: openCUDAEngine takes
# its LoadRequest) through serve: `serve --ui --voice-cache 1GiB`, uncapped, run 1's cast of four 20 s voices; the
# whole check (run-lib.sh: fast and exact, the forced tensor-core attention, the engine's tests, the agreement with
# the CPU); the step and the tower under exact (session 42 ran exact in the take bench only).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at this commit).
set -u
. docs/perf/run-lib.sh
run_setup run1 ${BUDGET:-480} .carry-fa .carry-fb
[ -d /tmp/full ] || T 120 make-full "$X/proscenium" make-tiny /tmp/full --geometry full &
(cd kernels && T 60 tests-kernels $X/kernels.test -test.v) &
(cd engine/cuda && T 90 tests-gemm env PROSCENIUM_GEMM_KERNELS='simt|tc16|tc32' $X/cuda.test -test.v -test.run '^(TestGemmBF16|TestGemmFP8|TestGemmGrouped|TestGemmWide|TestGemmTiles31|TestGemmGroupedExperts)$')
wait
cast() { # PORT KEY
	T 75 cast-$2 python3 docs/perf/h200-lead42-cast.py $1 $ROOT/engine/audio/decode/testdata/ref.wav 12 20,20,20,20
}
serve_variants none cast "1GiB=--voice-cache 1GiB"
whole_check_tests
run_whole_check
T 20 rows-exact $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics exact
T 20 tw-exact $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill 60 -numerics exact
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally tests-gemm tests-exact tests-fast tests-forced engine tests-kernels
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
agreement_report
echo "== 1GiB-none: $(cut -c1-200 $O/load-1GiB-none.log)"; cut -c1-260 $O/cast-1GiB-none.log
echo "-- rows exact: $(grep -hE '^B =' $O/rows-exact.log | cut -c1-80 | tr '\n' ' ')"
echo "-- tower exact: $(grep -h '^takes' $O/tw-exact.log | cut -c1-60 | tr '\n' ';')"
