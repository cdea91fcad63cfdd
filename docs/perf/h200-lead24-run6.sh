#!/bin/bash
# Lead, session 24, run 6 (one call, ≤ 150 s): run 2 again on the codec's tail by mode (407afc4): where the convolutions' time goes now
# (run 1: a 32-frame chunk's stages 4.7 ms; at four takes the codec adds 0.34 ms to a frame). ncu of bench-codec
# (S2 geometry, a 32-frame take: streaming chunks 1…16, the first frame, one whole 32-frame chunk): every kernel's
# duration; codec_conv_gemm's tensor-pipe use, occupancy, issue and stall reasons, shared-memory bank conflicts.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run6.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run6 150 .carry-fa
# Beside it: the convolutions bounded to five blocks an SM (__launch_bounds__(128, 5): 96 registers, 48 bytes of
# spill; .carry-f5, h200-lead24-build-old.sh on a patched tree) against four, bench-codec twice each, alternating.
bash docs/perf/h200-lead6-unpack.sh .carry-f5 $ROOT/.carry-5 >> $O/unpack.log 2>&1
for i in 1 2; do for v in 4 5; do
	b=$P; [ $v = 5 ] && b=$ROOT/.carry-5/proscenium-gpu
	T 20 codec-$v-$i $b bench-codec -synthetic s2 -stages -repeats 3
done; done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
C="$P bench-codec -synthetic s2 -frames 32 -repeats 1"
T 40 ncu-all $NCU --clock-control none --csv --metrics gpu__time_duration.sum,launch__grid_size $C
M=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active
for s in long_scoreboard barrier short_scoreboard mio_throttle math_pipe_throttle wait lg_throttle not_selected selected dispatch_stall no_instruction; do
	M=$M,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
M=$M,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,lts__t_sector_hit_rate.pct,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
# The last 68 launches: the whole 32-frame chunk's GEMMs (8 post-module layers × 4, the upsampler's 6, the decoder's 30).
N=$(python3 -c "import csv;r=[x for x in csv.reader(l for l in open('$O/ncu-all.log') if l.startswith('\"'))];k=r[0].index('Kernel Name');i=r[0].index('ID');print(len({x[i] for x in r[1:] if x[k].startswith('codec_conv_gemm')}))")
echo "codec_conv_gemm launches: $N" > $O/count.log
T 90 ncu-gemm $NCU --clock-control none --csv -k regex:codec_conv_gemm --launch-skip $(( N > 68 ? N - 68 : 0 )) --metrics $M $C
run_pack
run_tally
for i in 1 2; do for v in 4 5; do echo "-- codec $v $i: $(grep -hE 'streaming|first frame|whole decode' $O/codec-$v-$i.log | sed 's/  */ /g' | tr '\n' '|')"; grep -hE '^ +[0-9]+ ' $O/codec-$v-$i.log | awk '{printf "%s ", $(NF-1)}'; echo; done; done
cat $O/count.log; echo "-- ncu-all"; python3 docs/perf/ncu-agg.py $O/ncu-all.log 2>&1 | head -14
echo "-- ncu-all launches"; python3 docs/perf/ncu-launches.py $O/ncu-all.log codec_conv_gemm 2>&1 | tail -n 40 | cut -c1-160
echo "-- ncu-gemm"; python3 docs/perf/ncu-launches.py $O/ncu-gemm.log 2>&1 | cut -c1-400 | head -90
echo "-- the whole chunk's launches"; python3 - $O/ncu-all.log <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
h = rows[0]; k, i, m, v, g = (h.index(x) for x in ('Kernel Name', 'ID', 'Metric Name', 'Metric Value', 'Grid Size'))
L = {}
for r in rows[1:]:
    L.setdefault(int(r[i]), {'k': r[k].split('(')[0], 'g': r[g]})[r[m]] = float(r[v].replace(',', ''))
ids = sorted(L); conv = [x for x in ids if L[x]['k'] == 'codec_conv_gemm']
for x in ids:
    if x >= conv[-68]:
        print(f"{L[x]['k'][:24]:24s} {L[x]['g']:14s} {L[x]['gpu__time_duration.sum']/1e3:8.1f} us")
PY
