#!/usr/bin/env bash
# Installs the Debian 12 packages Proscenium builds and tests with, skipping
# everything already installed (a second run only asks dpkg and returns).
#
#   GTK 3 + WebKitGTK 4.0 headers   the Wails desktop window
#   WebKitGTK 4.1 headers           the studio of the second .deb (-tags webkit2_41)
#   debootstrap                     make deb-test: a clean Debian 12 root
#   ALSA headers                    audio output (oto)
#   Xvfb, xauth, ImageMagick        the window under a virtual display (make window-e2e,
#                                   make screenshot)
#   Chromium                        the browser test (driven by playwright-core)
#   nvidia-cuda-toolkit/-dev        CUDA 11.8 headers and nvcc (contrib/non-free)
#   sox                             audio checks in tests
#   libmp3lame, libopusenc, libfdk-aac (non-free), libsoxr, librubberband
#                                   the speech API's encoders, resampler and
#                                   time stretch (cgo; the runtime libraries
#                                   come with the -dev packages)
#   ffmpeg                          decodes the API's replies back in tests
#   libmpg123, libopusfile          reading MP3 and Ogg Opus reference voices (engine/audio/decode)
set -euo pipefail

packages=(
	build-essential pkg-config git
	libgtk-3-dev libwebkit2gtk-4.0-dev libwebkit2gtk-4.1-dev libasound2-dev debootstrap
	xvfb xauth imagemagick chromium
	nvidia-cuda-toolkit nvidia-cuda-dev
	sox
	libmp3lame-dev libopus-dev libopusenc-dev libfdk-aac-dev libsoxr-dev librubberband-dev
	ffmpeg
	libmpg123-dev libopusfile-dev
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	echo "== setup-debian: all ${#packages[@]} packages present"
	exit 0
fi
echo "== setup-debian: installing ${missing[*]}"

if ((EUID != 0)); then
	command -v sudo >/dev/null || { echo "setup-debian: run as root or install sudo" >&2; exit 1; }
	exec sudo --preserve-env=DEBIAN_FRONTEND bash "$0" "$@"
fi
export DEBIAN_FRONTEND=noninteractive

# Another apt (unattended upgrades, a parallel setup) may hold the lock:
# wait for it (pgrep where procps is installed; apt's lock timeout always).
while command -v pgrep >/dev/null && { pgrep -x apt-get >/dev/null || pgrep -x dpkg >/dev/null; }; do
	echo "setup-debian: waiting for another apt-get/dpkg to finish"
	sleep 5
done
apt_wait=(-o DPkg::Lock::Timeout=600)

# The CUDA packages live in Debian's contrib and non-free components: append
# them to every Debian source (deb822 `Components:` lines, or classic `deb`
# lines) that lacks them, comparing whole words (non-free-firmware is not
# non-free).
add_components() {
	local f new
	for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
		[[ -f $f ]] || continue
		new=$(awk -v want="contrib non-free" '
			/^Components:/ || (/^deb(-src)?[ \t]/ && /debian/) {
				n = split(want, w, " ")
				for (i = 1; i <= n; i++) {
					found = 0
					for (j = 2; j <= NF; j++) if ($j == w[i]) found = 1
					if (!found) $0 = $0 " " w[i]
				}
			}
			{ print }' "$f")
		if [[ $new != "$(cat "$f")" ]]; then
			printf '%s\n' "$new" >"$f"
			echo "setup-debian: added contrib non-free to $f"
		fi
	done
}
add_components

apt-get "${apt_wait[@]}" update -q
apt-get "${apt_wait[@]}" install -y -q --no-install-recommends "${missing[@]}"
echo "== setup-debian: done"
