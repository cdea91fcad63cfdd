#!/bin/bash
# fuse27's device run (issue 27, "fewer, fatter launches"): the fused step's kernel tests
# (each against its unfused pair under fast, then whole steps fused vs unfused), the kernels
# whose bodies the fused ones now share (both policies: exact must still give the CPU's bits),
# then bench-backbone and bench-take under fast with and without the fused step.
# About 2–3 minutes (the steps' timeouts cap it at 6). Exits non-zero when a test fails or a step is missing; prints a table last.
#
# The bundle (built off the device, sm_90 SASS only, as docs/perf/h200-fast27-run2.sh's):
#   make kernels KERNEL_GENCODE='-gencode=arch=compute_90,code=sm_90'
#   go test -tags cuda -c -ldflags "-s -w" -o .carry-fuse27/cuda.test ./engine/cuda
#   go build -tags cuda -ldflags "-s -w" -o .carry-fuse27/proscenium-gpu ./cmd/proscenium-gpu
#   (cd .carry-fuse27 && tar cJf bundle.tar.xz cuda.test proscenium-gpu && rm cuda.test proscenium-gpu)
# Run from the repository root with .carry-fuse27 carried: bash docs/perf/h200-fuse27.sh
set -u
ROOT=$PWD; C=$ROOT/.carry-fuse27; O=/tmp/fuse27; mkdir -p $O; OUT=${OUT:-$O/out}; mkdir -p $OUT
(cd $C && tar xJf bundle.tar.xz) || { echo "no bundle in $C"; exit 2; }
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $C/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$C/tokenizer.json
unset PROSCENIUM_GPU_FUSED
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
T 90 tests-fused $C/cuda.test -test.v -test.run 'TestFused'
T 90 tests-refactored $C/cuda.test -test.v -test.run 'TestMoERoute|TestMoECombineNorm|TestMoEDown|TestBackboneRowsAndAddNorm|TestBackboneMoE|TestAttentionCoreBits|TestDeltaNetMixBits|TestMixerStepGraph'
T 50 bench-backbone $C/proscenium-gpu bench-backbone --synthetic full --json -numerics fast -steps 50
T 50 bench-backbone-fused $C/proscenium-gpu bench-backbone --synthetic full --json -numerics fast -steps 50 -fused
T 45 bench-take $C/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast -json
T 45 bench-take-fused $C/proscenium-gpu bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast -json -fused
cp $O/*.log $O/machine.txt $OUT/ 2>/dev/null
echo "== steps"; grep -E "^rc=" $O/steps.log | tr '\n' ' '; echo
fail=0
grep -qE "^rc=0 tests-fused" $O/steps.log && grep -qE "^rc=0 tests-refactored" $O/steps.log || fail=1
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|    --- FAIL|panic:" $O/tests-*.log | head -30
echo "== fused against unfused (relative errors, launches)"
grep -hE "relative error|launches per step|worst step row" $O/tests-fused.log | sed 's/^ *//' | sort | uniq -c | sort -rn | head -20
python3 - "$O" <<'PY' || fail=1
import json, sys
o = sys.argv[1]
def load(n):
    try:
        return json.load(open(f"{o}/{n}.log"))
    except Exception as e:
        print(f"{n}: no result ({e})"); return None
bb, bf, tk, tf = load("bench-backbone"), load("bench-backbone-fused"), load("bench-take"), load("bench-take-fused")
rows = []
if bb and bf:
    var = {(v["deltanet_step"], v.get("fused_step", False)): v for v in bb["step_variants"]}
    u, f = var.get(("split", False)), var.get(("split", True))
    rows += [("backbone step, device ms (main step of each run)", f'{bb["step_device_ms"]:.3f}', f'{bf["step_device_ms"]:.3f}'),
             ("  the same, step variants of one run (split DeltaNet)", f'{u["step_device_ms"]:.3f}' if u else "-", f'{f["step_device_ms"]:.3f}' if f else "-"),
             ("launches per step", bb["step_launches"], bf["step_launches"]),
             ("step without MoE / without mixers, ms", f'{bb["step_without_moe_ms"]:.3f} / {bb["step_without_mixers_ms"]:.3f}', f'{bf["step_without_moe_ms"]:.3f} / {bf["step_without_mixers_ms"]:.3f}'),
             ("GB/s, share of copy", f'{bb["step_gb_per_s"]:.0f}, {100*bb["copy_share"]:.1f} %', f'{bf["step_gb_per_s"]:.0f}, {100*bf["copy_share"]:.1f} %')]
    if not bf.get("fused_step"): print("bench-backbone -fused did not run the fused step"); sys.exit(1)
if tk and tf:
    rows += [("take RTF (300 frames)", f'{tk["real_time_factor"]:.4f}', f'{tf["real_time_factor"]:.4f}'),
             ("first audio ms", f'{tk["time_to_first_audio_ms"]:.1f}', f'{tf["time_to_first_audio_ms"]:.1f}'),
             ("launches per frame / per step (take)", f'{tk["frame_launches"]} / {tk["step_launches"]}', f'{tf["frame_launches"]} / {tf["step_launches"]}'),
             ("step in the take, graph alone, ms", f'{tk["backbone_step_ms"]:.3f}', f'{tf["backbone_step_ms"]:.3f}')]
    if not tf.get("fused_step"): print("bench-take -fused did not run the fused step"); sys.exit(1)
print(f'{"figure (fast numerics, H200)":55} {"unfused":>18} {"fused":>18}')
for r in rows: print(f"{r[0]:55} {str(r[1]):>18} {str(r[2]):>18}")
PY
exit $fail
