#!/bin/bash
# Lead, session 24, run 5 (one call, ≤ 400 s): session 23 run 3's whole check on session 24's final code (the
# codec's tail by mode, codec24; session 23's fast B-row tower instances), with the codec's tests added. While
# serve --ui loads a full-size checkpoint: the tests of every path under exact and under fast (and the prefill
# paths with the tensor-core attention forced on), the engine's tests, the free-running agreement with the CPU
# (fast, the tensor-core attention forced on: demo 100 seeds, odd 20 with the rounding baseline). Then, alone:
# the take (B = 1, 4), the step (B = 1…8) twice, the tower twice, the prefill, the voices, exact's take. Then the
# product through serve: a new 10 s voice and requests in it, four concurrent requests, the studio's service.
# The codec's stages and the take of four without its audio decoded (-decode=false) beside the take. Carried:
# .carry-fa and .carry-fb (h200-lead6-build.sh, on 407afc4). Logs: $OUT/run5.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run5 400 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
F='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestBackboneStepRowsMatchTakesAlone|TestFramesTwoAhead|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestTakeFramesPCMMatchesAlone|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTowerFrames|TestAttentionFlash|TestFlashMMAKernel|TestFlashScratch|TestAttentionFlashRefusesExact|TestAttentionLayer|TestAttentionCoreBlocks|TestAttentionCoreBits|TestAttentionDecode|TestDeltaNetChunkIntraTiled|TestDeltaNetChunkPrepTiled|TestDeltaNetChunkedLayer|TestDeltaNetChunkRule|TestMoEGroup|TestGemmGroupedExperts|TestMoERouteNotANumber|TestGemmStreamFP8|TestGemmStreamSwiGLU|TestGemmStreamRefusals|TestGemmF16Range|TestBackboneXPartsBits|TestGemmXParts|TestGemmSplitK|TestMoESwiGLU|TestGemvWeightsAhead|TestGemvRowsWeightsAhead|TestRowsAhead|TestTowerPromptRows|TestTowerFrameRows|TestGemvRows|TestBackboneStepPDLOrder|TestMoEStepChainPDL|TestFusedStep|TestGemvFP8|TestMoEDown|TestMoEDown2MatchesMoEDown|TestMoEDownRowsMatchesOneRow|TestMoEGateUpRoute|TestMoEGateUpIdsMatchesRouted|TestExpertTable|TestBackboneMoE|TestTowerGateUpMMA|TestTowerGateUpMMAUse|TestMoEDown2MMA|TestMoEDown2MMAExpertTable|TestGemvRowsMatchesOneRow|TestTowerFastRows|TestTowerFastRowsVariant|TestCodecConvGEMMKernel|TestCodecGPUBadInput|TestCodecGPUChunkedEqualsWhole|TestCodecGPUMatchesReference|TestCodecBytes|TestCodecEncoderGoldens|TestCodecEncoderS2)$'
FF='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether|TestBackboneXPartsBits)$'
(cd engine/cuda && T 220 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 150 tests-forced env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_ATTN_MMA=on $X/cuda.test -test.v -test.run "$FF") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
( for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
  T 90 agree-demo-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json
  T 50 agree-odd-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json ) &
(cd engine/cuda && T 210 tests-exact $X/cuda.test -test.v -test.run "$F")
wait $(jobs -p | grep -v "^$LOADER$") 2>/dev/null; sleep 1
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast"
T 40 take $P $TK
T 8 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 8 rows2 $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 6 tower $P bench-tower -synthetic full -rows 1,2,4,8
T 6 tower2 $P bench-tower -synthetic full -rows 1,2,4,8
T 12 prefill1 $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
T 20 codec $P bench-codec -synthetic s2 -stages -repeats 3
T 30 take-nodecode $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast -decode=false
T 30 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics exact
wait $LOADER
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
T 25 connected1 python3 docs/perf/h200-lead9-concurrent.py 18100 4
T 40 studio python3 docs/perf/h200-lead12-studio.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
run_pack
run_tally tests-exact tests-fast tests-forced engine
grep -h 'worst vector' $O/tests-fast.log | grep -o 'flash-mma[-k16]* call.*' | awk '{print $1, $NF}' | sort -k2 -g | tail -3
echo "-- codec"; grep -hE "streaming|first frame|whole decode" $O/codec.log | sed 's/  */ /g'
for f in take take-nodecode take-exact; do echo "-- $f"; grep -hE "^take|takes after|first audio  |  frame  |  codec  |batch [14]|  loop|backbone step" $O/$f.log | cut -c1-200; done
for f in rows rows2; do echo "-- $f"; grep -hE "^B =" $O/$f.log | cut -c1-110; done; grep -h "^takes" $O/tower.log $O/tower2.log | cut -c1-110
echo "-- prefill1"; grep -E '^(60|300|700) ' $O/prefill1.log | cut -c1-40
for f in ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache" $O/$f.log | cut -c1-160; done
for f in agree-demo-fast agree-odd-fast; do echo "-- $f"; python3 -c "
import json;d=json.load(open('$O/$f.json'));fr=d['free_running'];tf=d['teacher_forced']
print('identical',fr['identical_takes'],'of',fr['seeds'],'classes',{k:fr.get(k) for k in ('draw_near_ties','routing_near_ties','unexplained')},'tf worst',tf['worst_relative_error'],'over',tf['vectors_over_tolerance'],'baseline',[b['identical_takes'] for b in (d.get('cpu_rounding_baseline') or [])])" 2>&1 | tail -1; done
echo "-- product"; cat $O/load.log | cut -c1-120; tail -n 6 $O/product.log; tail -n 5 $O/connected1.log; tail -n 6 $O/studio.log | cut -c1-330
