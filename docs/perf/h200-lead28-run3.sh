#!/bin/bash
# Lead, session 28, run 3 (one call, ≤ 440 s), on int28 with run 1's choices as defaults: the final code's figures
# beside the same binary with the four changes off (attention ahead, the tower's few-split attention, the code-0
# tables, the norm in the draw), while serve --ui loads a full-size checkpoint: the take (B = 1, 4; six takes, two
# rounds), the step and the tower (B = 1…8), off / on twice alternating, the take off / on twice (the codes' digests
# match where no draw sits at a near-tie), the prefill, the voices, exact's take, a take under a 22 GiB cap (the
# tables left out: the plan must say so); then the product through serve (a new 10 s voice and requests in it, four
# concurrent requests, the studio's service). Carried: .carry-fa and .carry-fb.
set -u
. docs/perf/run-lib.sh
run_setup run3 440 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
OFF="env PROSCENIUM_GPU_ATTN_AHEAD=0 PROSCENIUM_GPU_TOWER_ATTN=wide PROSCENIUM_GPU_TOWER_EH0=off PROSCENIUM_GPU_DRAW_NORM=0"
T 45 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
for i in 1 2; do
	T 10 rows-off-$i $OFF $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
	T 10 rows-on-$i $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
	T 6 tower-off-$i $OFF $P bench-tower -synthetic full -rows 1,2,4,8
	T 6 tower-on-$i $P bench-tower -synthetic full -rows 1,2,4,8
done
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do T 25 take-off-$i $OFF $P $TK; T 25 take-on-$i $P $TK; done
T 12 prefill1 $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
T 25 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics exact
T 40 capped $P bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -cap 23622320128 -numerics fast
wait $LOADER
run_product 18100
run_pack
run_tally
for f in take take-exact; do echo "-- $f"; grep -hE "^take|takes after|first audio  |  frame  |  codec  |batch [14]|  loop|backbone step|device memory|held" $O/$f.log | cut -c1-200; done
for i in 1 2; do for v in off on; do echo "-- rows $v $i: $(grep -hE '^B =' $O/rows-$v-$i.log | cut -c1-60 | tr '\n' ' ')"; done; done
for i in 1 2; do for v in off on; do echo "-- tower $v $i: $(grep -h '^takes' $O/tower-$v-$i.log | sed 's/, gemvx default//;s/ of weights//' | cut -c1-80 | tr '\n' ';')"; done; done
for i in 1 2; do for v in off on; do echo "-- take $v $i"; grep -hE "^take  |batch [14]" $O/take-$v-$i.log | cut -c1-150; grep -h 'batch 4' $O/take-$v-$i.log | grep -o 'codes.*'; done; done
echo "-- prefill1"; grep -E '^(60|300|700) ' $O/prefill1.log | cut -c1-40
for f in ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache" $O/$f.log | cut -c1-160; done
echo "-- capped"; grep -hiE "tier|tables|^take  |first audio  |peak|held" $O/capped.log | cut -c1-220 | head -8
product_report
