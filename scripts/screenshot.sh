#!/usr/bin/env bash
# screenshot.sh STUDIO CLI OUT.png: opens the real desktop window under Xvfb
# (fresh XDG directories, a scene for two speakers in the editor: three
# lines), loads the demo model (`proscenium make-tiny`, random weights) on
# the CPU backend, starts a long take, and saves the screen while the take
# runs: the model chip, the lines, the waveform growing, the take's
# progress and the readouts. For reviews; not part of the tests.
set -euo pipefail
studio=${1:?usage: screenshot.sh STUDIO CLI OUT.png}
cli=${2:?usage: screenshot.sh STUDIO CLI OUT.png}
out=${3:?usage: screenshot.sh STUDIO CLI OUT.png}
wait_s=${SCREENSHOT_WAIT:-14}
mkdir -p "$(dirname "$out")"
studio=$(realpath "$studio")
out=$(realpath "$out")

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$cli" make-tiny "$scratch/demo-model" >/dev/null
mkdir -p "$scratch/config/proscenium"
cat >"$scratch/config/proscenium/settings.json" <<JSON
{"script": "<|speaker:0|>[slowly, to the crowd] Friends, Romans, countrymen, <shout>lend me your ears</shout>;\n<|speaker:1|>I come to bury Caesar, not to praise him.\n\n<|speaker:0|>The evil that men do lives after them.",
 "max_frames": 2048, "model_dir": "$scratch/demo-model"}
JSON

export XDG_CONFIG_HOME="$scratch/config" XDG_DATA_HOME="$scratch/data" XDG_CACHE_HOME="$scratch/cache"
# Software rendering: Xvfb has no GPU.
export WEBKIT_DISABLE_COMPOSITING_MODE=1 LIBGL_ALWAYS_SOFTWARE=1 NO_AT_BRIDGE=1

xvfb-run -a -s "-screen 0 1320x940x24" bash -c '
	"$1" --model "$5" --speak >"$3/studio.log" 2>&1 &
	pid=$!
	sleep "$4"
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "screenshot: the studio exited early:" >&2
		cat "$3/studio.log" >&2
		exit 1
	fi
	import -window root "$2"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
' _ "$studio" "$out" "$scratch" "$wait_s" "$scratch/demo-model"
echo "screenshot: $out"
