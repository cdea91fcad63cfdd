# docs/perf/run-lib.sh: what the lead's device scripts share (sourced by docs/perf/h200-lead12-*.sh,
# run from the root of the checkout the device machine was given, $OUT its folder that comes back).
#   run_setup NAME BUDGET CARRY…  unpacks each carried bundle (h200-lead6-build.sh) into .carry-x,
#                                 sets ROOT, X, O (= /tmp/NAME, the logs), START, END (START + BUDGET
#                                 seconds, or $BUDGET_S), P (proscenium-gpu) and the tests' and the
#                                 CLI's env
#   T LIMIT STEP CMD…             runs CMD into $O/STEP.log, at most LIMIT seconds and never past
#                                 END; steps.log gets its exit status and time
#   run_serve PORT                (in the background) writes a full-size checkpoint and starts
#                                 `proscenium serve --ui` on it; load.log says when /healthz had it
#   wait_loaded PORT              waits for a serve started by the script to load (/healthz); load.log says when
#   run_tally STEP…               each step's passes and failures; run_pack tars $O into $OUT
#   whole_check_tests TEST…       sets F, the whole check's tests (session 25 run 4's list) with TEST… in front,
#                                 and FF, its prefill paths, run again with the tensor-core attention forced on
#   run_whole_check               after whole_check_tests: F under fast and exact, FF with the tensor-core attention
#                                 forced on, the engine's tests and run_agreement, at once; then waits
#   run_agreement                 the free-running agreement with the CPU (fast, the tensor-core attention forced
#                                 on: demo 100 seeds, odd 20 with the rounding baseline) on make-tiny checkpoints;
#                                 agreement_report prints each run's classes
#   serve_each CAPS FN            for each memory cap in CAPS ("none" or serve's --memory-cap value), the build before
#                                 ($ROOT/.carry-o: its proscenium and proscenium-gpu) and this one: `serve --ui` at full
#                                 geometry from /tmp/full (MODEL, BACKEND override), FN PORT KEY once it has loaded
#                                 (KEY: old-CAP or new-CAP; its logs serve-KEY.log/.err, load-KEY.log), then stops it
#   serve_variants CAPS FN N=F…   serve_each for this build alone, once per variant N with serve's extra flags F (KEY
#                                 N-CAP)
#   table_benches                 on an H200 (any card with ANY_CARD=yes), the Current figures' take, step and tower
#                                 benches; table_report prints them
#   run_product PORT              the product through run_serve's serve (a new 10 s voice and requests in it, four
#                                 concurrent requests, the studio's service), then stops it; product_report
run_setup() {
	local name=$1 budget=$2 c
	shift 2
	ROOT=$PWD X=$PWD/.carry-x O=/tmp/$name
	rm -rf "$O"; mkdir -p "$O" "$X"
	START=$(date +%s); END=$(( START + ${BUDGET_S:-$budget} ))
	for c in "$@"; do bash docs/perf/h200-lead6-unpack.sh "$c" "$X" >> "$O/unpack.log" 2>&1 || { cat "$O/unpack.log"; exit 3; }; done
	gunzip -c engine/demo/qwen3/tokenizer.json.gz > "$X/tokenizer.json"
	export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
		PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
	{ date -u; echo "HEAD $(cat .carry-fa/REV 2>/dev/null || cat .carry-fs/REV 2>/dev/null || cat .carry-ft/REV)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > "$O/machine.txt" 2>&1
	P=$X/proscenium-gpu
	export LD_LIBRARY_PATH=$X/lib PROSCENIUM_GPU_WORKER=$P
}

T() {
	local s=$1 n=$2 t left; shift 2
	left=$(( END - $(date +%s) )); [ "$left" -lt "$s" ] && s=$left
	[ "$s" -lt 5 ] && { echo "skipped $n (budget)" >> "$O/steps.log"; return; }
	t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> "$O/steps.log"
	timeout "$s" "$@" > "$O/$n.log" 2>&1
	echo "rc=$? $n $(( $(date +%s) - t ))s" >> "$O/steps.log"
}

run_serve() {
	local port=$1 t0 i
	T 70 make-full "$X/proscenium" make-tiny /tmp/full --geometry full
	XDG_DATA_HOME=/tmp/xdgf XDG_CONFIG_HOME=/tmp/xdgc "$X/proscenium" serve --ui --model /tmp/full --backend cuda \
		--batch 4 --port "$port" --settings "" > "$O/serve.log" 2>&1 &
	echo $! > "$O/serve.pid"; t0=$(date +%s)
	for i in $(seq 900); do
		curl -s "http://127.0.0.1:$port/healthz" > "$O/status.json" 2>/dev/null
		grep -q '"model_loaded":true' "$O/status.json" && break
		[ "$(date +%s)" -ge "$END" ] && break; sleep 0.5
	done
	echo "model loaded after $(( $(date +%s) - t0 )) s: $(cat "$O/status.json")" > "$O/load.log"
}

# wait_loaded PORT: polls serve's /healthz until the model is loaded (or END); load.log says after how long.
wait_loaded() {
	local port=$1 t0 i r=""
	t0=$(date +%s.%N)
	for i in $(seq 900); do
		r=$(curl -s --max-time 2 "http://127.0.0.1:$port/healthz")
		echo "$r" | grep -q '"model_loaded":true' && break
		[ "$(date +%s)" -ge "$END" ] && break; sleep 0.5
	done
	awk -v a="$(date +%s.%N)" -v b="$t0" -v r="$r" 'BEGIN { printf "model loaded after %.1f s: %s\n", a - b, r }' > "$O/load.log"
}

serve_each() {
	local caps=$1 fn=$2 cap w cli worker
	for cap in $caps; do
		for w in old new; do
			cli=$X/proscenium worker=$P; [ $w = old ] && cli=$ROOT/.carry-o/proscenium worker=$ROOT/.carry-o/proscenium-gpu
			serve_one "$cli" "$worker" $w-$cap "$cap" "" "$fn"
		done
	done
}

# serve_variants CAPS FN NAME=FLAGS…: serve_each for this build alone, once per variant: serve's extra FLAGS (KEY NAME-CAP).
serve_variants() {
	local caps=$1 fn=$2 cap v
	shift 2
	for cap in $caps; do
		for v in "$@"; do serve_one "$X/proscenium" "$P" "${v%%=*}-$cap" "$cap" "${v#*=}" "$fn"; done
	done
}

# serve_one CLI WORKER KEY CAP FLAGS FN: serve --ui from CLI and WORKER under CAP with FLAGS, FN PORT KEY once loaded.
SERVE_PORT=18900
serve_one() {
	local cli=$1 worker=$2 k=$3 cap=$4 flags=$5 fn=$6 capflag="" pid i
	[ "$cap" = none ] || capflag="--memory-cap $cap"
	SERVE_PORT=$((SERVE_PORT + 1))
	PROSCENIUM_GPU_WORKER=$worker XDG_DATA_HOME=/tmp/xdg-$k XDG_CONFIG_HOME=/tmp/xdgc-$k "$cli" serve --ui \
		--model "${MODEL:-/tmp/full}" --backend "${BACKEND:-cuda}" --batch 4 --port $SERVE_PORT --settings "" $capflag $flags \
		> "$O/serve-$k.log" 2> "$O/serve-$k.err" &
	pid=$!
	wait_loaded $SERVE_PORT; cp "$O/load.log" "$O/load-$k.log"
	"$fn" $SERVE_PORT $k
	kill $pid 2>/dev/null
	for i in $(seq 40); do kill -0 $pid 2>/dev/null || break; sleep 0.5; done
}

# table_benches: on an H200 only (else a line in steps.log; ANY_CARD=yes: on any card), the Current figures' take, step and tower benches (as
# session 41's run 2): bench-take fast B = 1 and 4 (six takes, two rounds) and exact (two takes), bench-backbone
# (1, 2, 4, 8 rows), bench-tower (1, 2, 3, 4, 8 rows from 60 cache rows); table_report prints them.
table_benches() {
	[ "${ANY_CARD:-no}" = yes ] || grep -q H200 "$O/machine.txt" || { echo "not an H200: the benches left out" >> "$O/steps.log"; return; }
	T 50 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
	T 15 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
	T 15 tw $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill 60
	T 30 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics exact
}

table_report() {
	local f
	for f in take take-exact; do [ -f "$O/$f.log" ] && { echo "-- $f"; grep -hE "^take|takes after|first audio  |  frame  |batch [1-8]|backbone step|device memory|held" "$O/$f.log" | cut -c1-200; }; done
	[ -f "$O/rows.log" ] && echo "-- rows: $(grep -hE '^B =' "$O/rows.log" | cut -c1-80 | tr '\n' ' ')"
	[ -f "$O/tw.log" ] && echo "-- tower: $(grep -h '^takes' "$O/tw.log" | cut -c1-60 | tr '\n' ';')"
	true
}

run_tally() {
	local f
	echo "== steps ($(( $(date +%s) - START )) s)"; grep -E '^(rc=|skipped)' "$O/steps.log" | tr '\n' ' '; echo
	echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" "$O"/*.log | sort | uniq -c | head -20
	for f in "$@"; do
		echo "$f: $(grep -c -- '--- PASS' "$O/$f.log") pass, $(grep -c -- '--- FAIL' "$O/$f.log") fail; end: $(tail -n 1 "$O/$f.log" | cut -c1-100)"
	done
}

run_pack() { (cd /tmp && tar czf "$OUT/$(basename "$O").tgz" --exclude=tokenizer.json "$(basename "$O")"); }

whole_check_tests() {
	local extra=""
	[ $# -gt 0 ] && extra="$(IFS='|'; echo "$*")|"
	F="^(${extra}TestDeltaNetStepAhead|TestMoERowsChainPDL|TestDeltaNetClusterStep|TestDeltaNetLayer|TestDeltaNetMixBits|TestMixerStepGraph|TestDeltaNetStepRows|TestAttentionStepRows|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestBackboneStepRowsMatchTakesAlone|TestFramesTwoAhead|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestTakeFramesBeginTogetherSplit|TestFramesPrefixCacheMatchesUncached|TestFramesPrefixCacheInHostMemory|TestBackbonePrefillSplit|TestFramesSplitPrefix|TestRoutedStaging|TestFramesBeginPromptMatchesTheCPU|TestTowerFrames|TestAttentionFlash|TestFlashMMAKernel|TestFlashScratch|TestAttentionFlashRefusesExact|TestAttentionLayer|TestAttentionCoreBlocks|TestAttentionCoreBits|TestAttentionDecode|TestAttentionDecodeRows|TestAttentionStepAhead|TestDeltaNetChunkIntraTiled|TestDeltaNetChunkPrepTiled|TestDeltaNetChunkedLayer|TestDeltaNetChunkRule|TestMoEGroup|TestGemmGroupedExperts|TestMoERouteNotANumber|TestGemmStreamFP8|TestGemmStreamSwiGLU|TestGemmStreamRefusals|TestGemmF16Range|TestBackboneXPartsBits|TestGemmXParts|TestGemmSplitK|TestMoESwiGLU|TestGemvWeightsAhead|TestGemvRowsWeightsAhead|TestRowsAhead|TestTowerPromptRows|TestTowerFrameRows|TestGemvRows|TestBackboneStepPDLOrder|TestMoEStepChainPDL|TestFusedStep|TestGemvFP8|TestMoEDown|TestMoEDown2MatchesMoEDown|TestMoEDownRowsMatchesOneRow|TestMoEGateUpRoute|TestMoEGateUpIdsMatchesRouted|TestExpertTable|TestBackboneMoE|TestTowerGateUpMMA|TestTowerGateUpMMAUse|TestMoEDown2MMA|TestMoEDown2MMAExpertTable|TestGemvRowsMatchesOneRow|TestTowerFastRows|TestTowerFastRowsVariant|TestCodecConvGEMMKernel|TestCodecGPUBadInput|TestCodecGPUChunkedEqualsWhole|TestCodecGPUMatchesReference|TestCodecBytes|TestCodecEncoderGoldens|TestCodecEncoderS2)$"
	FF='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether|TestBackboneXPartsBits)$'
}

run_whole_check() {
	(cd engine/cuda && T 330 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
	(cd engine/cuda && T 200 tests-forced env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_ATTN_MMA=on $X/cuda.test -test.v -test.run "$FF") &
	(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
	run_agreement &
	(cd engine/cuda && T 330 tests-exact $X/cuda.test -test.v -test.run "$F")
	wait
}

run_agreement() {
	for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
	T 120 agree-demo-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json
	T 60 agree-odd-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json
}

agreement_report() {
	local f
	for f in agree-demo-fast agree-odd-fast; do echo "-- $f"; python3 -c "
import json;d=json.load(open('$O/$f.json'));fr=d['free_running'];tf=d['teacher_forced']
print('identical',fr['identical_takes'],'of',fr['seeds'],'classes',{k:fr.get(k) for k in ('draw_near_ties','routing_near_ties','unexplained')},'tf worst',tf['worst_relative_error'],'over',tf['vectors_over_tolerance'],'baseline',[b['identical_takes'] for b in (d.get('cpu_rounding_baseline') or [])])" 2>&1 | tail -1; done
}

run_product() {
	local port=$1
	T 45 product python3 docs/perf/h200-lead5-product.py "$port" $ROOT/engine/audio/decode/testdata/ref.wav
	T 25 connected1 python3 docs/perf/h200-lead9-concurrent.py "$port" 4
	T 40 studio python3 docs/perf/h200-lead12-studio.py "$port" $ROOT/engine/audio/decode/testdata/ref.wav
	kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
}

product_report() {
	echo "-- product"; cat $O/load.log | cut -c1-120; tail -n 6 $O/product.log; tail -n 5 $O/connected1.log; tail -n 6 $O/studio.log | cut -c1-330
}
