#!/bin/bash
# Lead, session 22, run 4 (one call, ≤ 300 s): the final code (run 3's plus ChooseGemv's t32r8u1 for the routed
# gate·up of 2–4 takes). While serve --ui loads a full-size checkpoint: the tests of the paths the choice reaches
# (the gate·up's ids against the routed launch, the B-row step and takes against the takes alone, the FP8 GEMVs,
# the expert table), fast and exact, and the engine's. Then alone: the take (B = 1, 4), the step (B = 1…8)
# twice, the tower, exact's take (B = 1, 4: its codes against run 3's), ncu of the four-row step. Then the
# product through serve: a new voice and requests in it, four concurrent requests, the studio's readout.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh). Logs: $OUT/run4.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run4 300 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
F='^(TestMoEGateUpIdsMatchesRouted|TestMoEGateUpRoute|TestGemvFP8|TestGemvRows|TestBackboneStepRowsMatchTakesAlone|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestTakeFramesPCMMatchesAlone|TestBackboneMatchesCPU|TestExpertTable|TestMoEDown2MatchesMoEDown|TestMoEStepChainPDL|TestBackboneStepPDLOrder|TestChooseGemvRoutedGateUp|TestChooseGemvPicksACompiledInstance|TestChooseGemvF64)$'
(cd engine/cuda && T 200 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 200 tests-exact $X/cuda.test -test.v -test.run "$F")
wait $(jobs -p | grep -v "^$LOADER$") 2>/dev/null; sleep 1
T 40 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
T 8 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 8 rows2 $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 6 tower $P bench-tower -synthetic full -rows 1,2,4,8
T 30 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics exact
wait $LOADER
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
T 25 connected1 python3 docs/perf/h200-lead9-concurrent.py 18100 4
T 40 studio python3 docs/perf/h200-lead12-studio.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
command -v ncu > /dev/null && T 60 ncu4 ncu --clock-control none --profile-from-start off --graph-profiling node --csv \
	--metrics gpu__time_duration.sum,dram__bytes_read.sum $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
run_pack
run_tally tests-exact tests-fast engine
for f in take take-exact; do echo "-- $f"; grep -hE "^take|takes after|first audio  |  frame  |batch [14]|backbone step" $O/$f.log | cut -c1-200; done
for f in rows rows2; do echo "-- $f"; grep -hE "^B =" $O/$f.log | cut -c1-110; done; grep -h "^takes" $O/tower.log | cut -c1-110
echo "-- product"; cat $O/load.log | cut -c1-120; tail -n 6 $O/product.log; tail -n 5 $O/connected1.log; tail -n 6 $O/studio.log | cut -c1-330
[ -f $O/ncu4.log ] && { echo "-- ncu4"; python3 docs/perf/ncu-agg.py $O/ncu4.log 2>&1 | head -14; }
