#!/usr/bin/env bash
# run-studio.sh STUDIO CLI [WORKER]: opens the desktop window when there is a
# display; on a machine without one (ssh, a server) serves the same UI to a
# browser with `proscenium serve --ui` and says where.
set -euo pipefail
studio=${1:?usage: run-studio.sh STUDIO CLI}
cli=${2:?usage: run-studio.sh STUDIO CLI [WORKER]}
# The studio and the CLI find the GPU worker through this variable (else next
# to themselves or in PATH): point it at the one `make gpu-worker` built.
worker=${3:-}
if [[ -n $worker && -x $worker ]]; then
	PROSCENIUM_GPU_WORKER=$(realpath "$worker")
	export PROSCENIUM_GPU_WORKER
fi
if [[ -n ${DISPLAY:-} || -n ${WAYLAND_DISPLAY:-} ]]; then
	exec "$studio"
fi
echo "run-studio: no display (DISPLAY and WAYLAND_DISPLAY are unset): serving the studio UI to a browser instead." >&2
echo "run-studio: open the address below (from another machine: ssh -L 7860:127.0.0.1:7860 this-host)." >&2
exec "$cli" serve --ui --host 127.0.0.1 --port 7860
