#!/bin/bash
# Lead, session 12, run 4 (one call, ≤ 150 s) on ba196f3, the final code: run 3's two winners made the
# defaults (the tiled chunked DeltaNet state, the cluster norm tails) beside run 2c's. No switch set:
# the fast tests of the paths the last defaults changed and the engine's tests, the free-running
# agreement with the CPU (fast, demo 100 seeds, odd 20 with the rounding baseline), then alone the
# take (B = 1, 4), the step, the tower, the prefill, the voices.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run4.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run4 150 .carry-fa
F='^(TestNormCluster|TestDeltaNetChunkStateTiled|TestDeltaNetChunkedLayer|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestTakeFramesMatchAlone|TestFramesTwoAhead|TestFramesPrefixCacheMatchesUncached|TestMoEGroup)$'
(cd engine/cuda && T 80 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
( for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
  T 70 agree-demo-fast $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json
  T 30 agree-odd-fast $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json ) &
wait
T 20 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 4 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
T 6 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 4 tower $P bench-tower -synthetic full -rows 1,4
T 6 prefill $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 12 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 14 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
run_pack
run_tally tests-fast engine
grep -hE "^take|takes after|first audio  |  frame  |batch [14]|backbone step" $O/take.log | cut -c1-200
grep -hE "^B =" $O/rows.log | cut -c1-110; grep -h "^takes" $O/tower.log | cut -c1-110; grep -E '^(60|300|700) ' $O/prefill.log
for f in ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache" $O/$f.log | cut -c1-160; done
for f in agree-demo-fast agree-odd-fast; do echo "-- $f"; python3 -c "import json;d=json.load(open('$O/$f.json'));fr=d['free_running'];tf=d['teacher_forced'];print('identical',fr['identical_takes'],'of',fr['seeds'],'near-ties',sum(1 for x in fr.get('divergences',[]) if x.get('near_tie')),'of',len(fr.get('divergences',[])),'tf worst',tf['worst_relative_error'],'over',tf['vectors_over_tolerance'],'baseline',[b['identical_takes'] for b in (d.get('cpu_rounding_baseline') or [])])" 2>&1 | tail -1; done
