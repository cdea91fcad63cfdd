#!/usr/bin/env bash
# Builds the .deb of Proscenium with nfpm from binaries already built:
#
#   scripts/deb.sh VERSION WEBKIT OUTDIR STUDIO CLI GPU
#
# WEBKIT is 4.0 or 4.1 (the WebKitGTK the studio was built for). The package
# holds /usr/bin/{proscenium-studio,proscenium,proscenium-gpu}, the desktop
# entry, the icons, and /usr/share/doc/proscenium/copyright (Proscenium's
# statement and the third-party notices). Depends comes from the libraries
# the binaries link (dpkg-shlibdeps on this Debian 12 machine), so it is what
# ldd sees; the GPU worker must link nothing of CUDA but the driver's
# libcuda.so.1, which stays out of Depends (no GPU, no driver: the studio
# runs on the CPU backend).
set -euo pipefail

version=$1 webkit=$2 outdir=$3 studio=$4 cli=$5 gpu=$6
work=$outdir/stage
rm -rf "$work" && mkdir -p "$work/icons" "$work/debian"

# The GPU worker: only the driver's libcuda, the C library and the C++
# runtime nvcc-free cgo needs. A libcudart/libcublas/libnvrtc here would need
# the CUDA toolkit on the user's machine.
allowed='^(libcuda\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|libresolv\.so\.2|librt\.so\.1|libgcc_s\.so\.1|libstdc\+\+\.so\.6|ld-linux-x86-64\.so\.2)$'
needed=$(readelf -d "$gpu" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for lib in $needed; do
	if ! [[ $lib =~ $allowed ]]; then
		echo "deb: $gpu links $lib: the worker may need only the driver's libcuda.so.1 (NEEDED: $(echo $needed))" >&2
		exit 1
	fi
done
echo "== deb: proscenium-gpu NEEDED: $(echo $needed)"

# Depends: what the studio and the CLI link, as packages of this system.
cat >"$work/debian/control" <<CONTROL
Source: proscenium

Package: proscenium
Architecture: amd64
CONTROL
(cd "$work" && dpkg-shlibdeps -O "$(realpath -m --relative-to="$work" "$studio")" "$(realpath -m --relative-to="$work" "$cli")") >"$work/shlibdeps" 2>"$work/shlibdeps.log" ||
	{ cat "$work/shlibdeps.log" >&2; exit 1; }
depends=$(sed -n 's/^shlibs:Depends=//p' "$work/shlibdeps")
[[ -n $depends ]] || { echo "deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
echo "== deb: Depends: $depends"

for size in 48 64 128 256 512; do
	convert build/appicon.png -resize ${size}x${size} "$work/icons/$size.png"
done

{
	cat <<'HEAD'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: proscenium
Comment: Proscenium has not declared a license for its own code yet: all
 rights are reserved by its authors. The programs contain the third-party
 code below, each part under its own license.

HEAD
	cat "$outdir/NOTICES"
} >"$work/copyright"

{
	cat <<YAML
name: proscenium
arch: amd64
platform: linux
version: "$version"
version_schema: none
section: sound
priority: optional
maintainer: "Proscenium <proscenium@localhost>"
description: |-
  Drama 3 text-to-speech studio on your own NVIDIA GPU.
  The studio window (proscenium-studio, WebKitGTK $webkit), the command line
  (proscenium: synth, serve with the OpenAI-compatible speech API, make-tiny)
  and the GPU worker (proscenium-gpu, needs the NVIDIA driver's libcuda).
license: "All rights reserved (no license declared)"
homepage: "https://huggingface.co/fishaudio/drama-3"
depends:
YAML
	IFS=',' read -ra deps <<<"$depends"
	for d in "${deps[@]}"; do
		printf '  - "%s"\n' "$(echo "$d" | xargs)"
	done
	cat <<YAML
suggests:
  - "libcuda1 | nvidia-driver-libs"
contents:
  - src: $studio
    dst: /usr/bin/proscenium-studio
    file_info: {mode: 0755}
  - src: $cli
    dst: /usr/bin/proscenium
    file_info: {mode: 0755}
  - src: $gpu
    dst: /usr/bin/proscenium-gpu
    file_info: {mode: 0755}
  - src: build/linux/proscenium.desktop
    dst: /usr/share/applications/proscenium.desktop
  - src: $work/copyright
    dst: /usr/share/doc/proscenium/copyright
  - src: README.md
    dst: /usr/share/doc/proscenium/README.md
  - src: docs/USER.md
    dst: /usr/share/doc/proscenium/docs/USER.md
  - src: docs/API.md
    dst: /usr/share/doc/proscenium/docs/API.md
  - src: docs/openapi.yaml
    dst: /usr/share/doc/proscenium/docs/openapi.yaml
YAML
	for size in 48 64 128 256 512; do
		printf '  - src: %s\n    dst: /usr/share/icons/hicolor/%sx%s/apps/proscenium.png\n' "$work/icons/$size.png" "$size" "$size"
	done
} >"$work/nfpm.yaml"

nfpm package --config "$work/nfpm.yaml" --packager deb --target "$outdir/"
ls -l "$outdir"/*.deb
