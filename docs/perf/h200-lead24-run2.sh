#!/bin/bash
# Lead, session 24, run 2 (one call, ≤ 150 s): why the codec's implicit-GEMM convolutions run at 50–120 TFLOP/s
# (run 1: a 32-frame chunk's stages 4.7 ms; at four takes the codec adds 0.34 ms to a frame). ncu of bench-codec
# (S2 geometry, a 32-frame take: streaming chunks 1…16, the first frame, one whole 32-frame chunk): every kernel's
# duration; codec_conv_gemm's tensor-pipe use, occupancy, issue and stall reasons, shared-memory bank conflicts.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run2.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2 150 .carry-fa
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
cat $O/count.log; echo "-- ncu-all"; python3 docs/perf/ncu-agg.py $O/ncu-all.log 2>&1 | head -14
echo "-- ncu-all launches"; python3 docs/perf/ncu-launches.py $O/ncu-all.log codec_conv_gemm 2>&1 | tail -n 80 | cut -c1-160
echo "-- ncu-gemm"; python3 docs/perf/ncu-launches.py $O/ncu-gemm.log 2>&1 | cut -c1-400 | head -90
