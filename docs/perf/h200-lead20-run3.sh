#!/bin/bash
# Lead, session 20, run 3 (one call, ≤ 260 s): the one-matrix GEMVs' first weights loaded before the
# PDL wait (Gemv.WeightsAhead, PROSCENIUM_GPU_GEMV_AHEAD=1; load_ahead, not .nc, so ptxas keeps the
# loads above griddepcontrol.wait, where it sank load_stream's). First the kernel against itself
# without (the same bits, x written by the kernel just before) and the probe's chain with and
# without; the backbone, tower and take tests under fast with it on; then alternating A/B of
# the step (B = 1, 2, 4), the tower frame (1, 4) and the take (B = 1).
# Carried: .carry-fa. Logs: $OUT/run3.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run3 260 .carry-fa
(cd engine/cuda && T 40 probe $X/cuda.test -test.v -test.run '^(TestChainProbe|TestGemvWeightsAhead)$')
F='^(TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestTowerFrames|TestTakeFramesMatchAlone|TestFusedStep)$'
(cd engine/cuda && T 100 tests-ahead env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMV_AHEAD=1 $X/cuda.test -test.v -test.run "$F")
for i in 1 2; do
	T 10 rows-off$i $P bench-backbone -synthetic full -steps 50 -rows 1,2,4 -numerics fast
	T 10 rows-on$i env PROSCENIUM_GPU_GEMV_AHEAD=1 $P bench-backbone -synthetic full -steps 50 -rows 1,2,4 -numerics fast
	T 8 tower-off$i $P bench-tower -synthetic full -rows 1,4
	T 8 tower-on$i env PROSCENIUM_GPU_GEMV_AHEAD=1 $P bench-tower -synthetic full -rows 1,4
done
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -batch 1 -seed-base 3 -numerics fast"
T 30 take-off $P $TK
T 30 take-on env PROSCENIUM_GPU_GEMV_AHEAD=1 $P $TK
run_pack
run_tally probe tests-ahead
grep -h 'chain probe\|final residual' $O/probe.log
for f in rows-off1 rows-on1 rows-off2 rows-on2; do echo "-- $f"; grep -hE "^B =" $O/$f.log | cut -c1-150; done
for f in tower-off1 tower-on1 tower-off2 tower-on2; do echo "-- $f"; grep -h "^takes\|frame" $O/$f.log | head -4 | cut -c1-150; done
for f in take-off take-on; do echo "-- $f"; grep -hE "^take|takes after|first audio  |  frame  |backbone step" $O/$f.log | cut -c1-200; done
