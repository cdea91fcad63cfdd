#!/usr/bin/env bash
# screenshot.sh STUDIO OUT.png: opens the real desktop window under Xvfb (a
# fresh settings directory, a short script in the editor), waits until it
# has drawn, and saves the screen. For reviews; not part of the tests.
set -euo pipefail
studio=${1:?usage: screenshot.sh STUDIO OUT.png}
out=${2:?usage: screenshot.sh STUDIO OUT.png}
wait_s=${SCREENSHOT_WAIT:-12}
mkdir -p "$(dirname "$out")"
studio=$(realpath "$studio")
out=$(realpath "$out")

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/config/proscenium"
cat >"$scratch/config/proscenium/settings.json" <<'JSON'
{"script": "Friends, Romans, countrymen, lend me your ears;\nI come to bury Caesar, not to praise him."}
JSON

export XDG_CONFIG_HOME="$scratch/config" XDG_DATA_HOME="$scratch/data" XDG_CACHE_HOME="$scratch/cache"
# Software rendering: Xvfb has no GPU.
export WEBKIT_DISABLE_COMPOSITING_MODE=1 LIBGL_ALWAYS_SOFTWARE=1 NO_AT_BRIDGE=1

xvfb-run -a -s "-screen 0 1320x860x24" bash -c '
	"$1" >"$3/studio.log" 2>&1 &
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
' _ "$studio" "$out" "$scratch" "$wait_s"
echo "screenshot: $out"
