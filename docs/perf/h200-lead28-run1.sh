#!/bin/bash
# Lead, session 28, run 1 (one call, ≤ 420 s), on branch int28 = main + attn28 (the tower's frame-row attention on
# as few splits as its cache needs) + dec28 (the step's one-launch attention reading its cache ahead of its PDL wait,
# behind a waited q/k/v projection) + eh0tab28 (the layers that embed code 0 by eh_proj tables) + drawnorm28 (a
# table layer's norm in the tail of the draw before it). Written in session 28
# without a device (loans paused); docs/PERF.md "Session 28" says what each is and how it was checked on the host.
# 1. The touched paths' tests under fast and exact (every tower test runs the new attention and, as attn-wide, the
#    old; TestTowerFrames also eh0-after, eh0-off and draw-norm-off; the draw with the table norm against the draw
#    then the norm; the decode attention with and without its reads ahead, and a PDL graph of steps), the engine's,
#    the agreement with the CPU (fast, the tensor-core attention forced on).
# 2. The A/Bs, one binary, by switch, alternating, twice: the step at 1, 2, 4, 8 rows after 60- and 300-row prompts
#    ($PROSCENIUM_GPU_ATTN_AHEAD=0 / unset); the tower at 1, 2, 4, 8 rows after 60 and 300 prefilled rows: old
#    (attention wide, no code-0 tables, norms as launches) / each of the three alone / all / all with the first
#    layer's W_h after the semantic draw; the take (B = 1, 4) with all four off / on.
# Carried: .carry-fa (h200-lead6-build.sh on int28).
set -u
. docs/perf/run-lib.sh
run_setup run1 420 .carry-fa
F='^(TestSamplerLeanTable|TestSamplerLeanEmbed|TestSamplerLeanMatchesWarpPick|TestTowerDrawnEH|TestTowerFrames|TestTowerFrameRows|TestTowerPromptRows|TestTowerFastRows|TestAttentionDecode|TestAttentionDecodeRows|TestAttentionStepAhead|TestAttentionStepRows|TestAttentionLayer|TestBackboneMatchesCPU|TestBackboneStepPDLOrder|TestBackboneStepRowsMatchTakesAlone|TestFusedStep|TestDeltaNetStepAhead|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesTwoAhead|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestModelBytesMatchesTheLoad)$'
(cd engine/cuda && T 170 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 100 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(run_agreement) &
(cd engine/cuda && T 170 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
for i in 1 2; do for p in 60 300; do
	T 12 bb-off-$p-$i env PROSCENIUM_GPU_ATTN_AHEAD=0 $P $BB -prefill $p
	T 12 bb-on-$p-$i $P $BB -prefill $p
done; done
TW="bench-tower -synthetic full -rows 1,2,4,8"
A=PROSCENIUM_GPU_TOWER_ATTN=wide E=PROSCENIUM_GPU_TOWER_EH0=off D=PROSCENIUM_GPU_DRAW_NORM=0
for i in 1 2; do for p in 60 300; do
	T 8 tw-old-$p-$i env $A $E $D $P $TW -prefill $p
	T 8 tw-attn-$p-$i env $E $D $P $TW -prefill $p
	T 8 tw-eh0-$p-$i env $A $D $P $TW -prefill $p
	T 8 tw-dnorm-$p-$i env $A $E $P $TW -prefill $p
	T 8 tw-all-$p-$i $P $TW -prefill $p
	T 8 tw-after-$p-$i env PROSCENIUM_GPU_TOWER_EH0=after $P $TW -prefill $p
done; done
OFF="env PROSCENIUM_GPU_ATTN_AHEAD=0 $A $E $D"
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do T 25 take-off-$i $OFF $P $TK; T 25 take-on-$i $P $TK; done
run_pack
run_tally tests-exact tests-fast engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -16
agreement_report
for p in 60 300; do for i in 1 2; do for v in off on; do echo "-- step $v $p $i: $(grep -hE '^(B-row step|B = )' $O/bb-$v-$p-$i.log | cut -c1-72 | tr '\n' ';')"; done; done; done
for p in 60 300; do for i in 1 2; do for v in old attn eh0 dnorm all after; do echo "-- tower $v $p $i: $(grep -h '^takes' $O/tw-$v-$p-$i.log | sed 's/, gemvx default//;s/ of weights//;s/ a take//' | cut -c1-60 | tr '\n' ';')"; done; done; done
for i in 1 2; do for v in off on; do echo "-- take $v $i"; grep -hE "^take  |batch [14]" $O/take-$v-$i.log | cut -c1-150; grep -h 'batch 4' $O/take-$v-$i.log | grep -o 'codes.*'; done; done
