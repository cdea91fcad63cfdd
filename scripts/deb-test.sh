#!/usr/bin/env bash
# Installs a .deb in a clean Debian 12 root and runs the demo from /tmp
# inside it, as a user without the repository would:
#
#   scripts/deb-test.sh PACKAGE.deb WORKDIR
#
# The root comes from debootstrap (minbase); its packages are cached as a
# tarball in WORKDIR (debootstrap --make-tarball) and apt's downloads in
# WORKDIR/apt-archives, so a repeat downloads nothing new. apt inside the
# root resolves the package's Depends from Debian's mirror: a Depends that is
# missing or wrong fails here. Then every binary's libraries must resolve
# (ldd; libcuda.so.1 is the driver's and may be absent), and `proscenium
# make-tiny` + `proscenium synth` must write a WAV of the frames asked for.
# Needs root (debootstrap, chroot, mount).
set -euo pipefail

deb=$(realpath "$1") work=$(realpath -m "$2")
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
tarball=$work/debootstrap-$suite-minbase.tgz
root=$work/root
archives=$work/apt-archives
start=$SECONDS

if ((EUID != 0)); then
	exec sudo bash "$0" "$@"
fi
mkdir -p "$work" "$archives/partial"

cleanup() {
	for m in "$root/var/cache/apt/archives" "$root/proc" "$root/dev"; do
		mountpoint -q "$m" 2>/dev/null && umount -l "$m"
	done
	return 0
}
trap cleanup EXIT
cleanup
rm -rf "$root"

if [[ ! -s $tarball ]]; then
	echo "== deb-test: caching the $suite base packages in $tarball"
	debootstrap --variant=minbase --components=main,contrib,non-free \
		--make-tarball="$tarball.tmp" "$suite" "$work/tarball-work" "$mirror" >"$work/make-tarball.log" 2>&1 ||
		{ tail -20 "$work/make-tarball.log"; exit 1; }
	mv "$tarball.tmp" "$tarball"
	rm -rf "$work/tarball-work"
fi
echo "== deb-test: debootstrap $suite into $root"
debootstrap --variant=minbase --components=main,contrib,non-free \
	--unpack-tarball="$tarball" "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
	{ tail -20 "$work/debootstrap.log"; exit 1; }

# non-free holds libfdk-aac2 (the speech API's AAC encoder).
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror $suite main contrib non-free
deb $mirror $suite-updates main contrib non-free
deb http://deb.debian.org/debian-security $suite-security main contrib non-free
SOURCES
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount --bind "$archives" "$root/var/cache/apt/archives"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"

cp "$deb" "$root/tmp/"
name=$(basename "$deb")
echo "== deb-test: apt-get install /tmp/$name (Depends from $mirror)"
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get update -q >"$work/apt.log" 2>&1 ||
	{ tail -20 "$work/apt.log"; exit 1; }
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "/tmp/$name" >>"$work/apt.log" 2>&1 ||
	{ tail -30 "$work/apt.log"; exit 1; }

echo "== deb-test: every library the binaries link resolves"
for b in proscenium proscenium-studio proscenium-gpu; do
	missing=$(chroot "$root" ldd "/usr/bin/$b" | grep 'not found' | grep -v 'libcuda\.so\.1' || true)
	if [[ -n $missing ]]; then
		echo "deb-test: /usr/bin/$b after installing the package:" >&2
		echo "$missing" >&2
		exit 1
	fi
done
for f in /usr/share/applications/proscenium.desktop /usr/share/icons/hicolor/512x512/apps/proscenium.png /usr/share/doc/proscenium/copyright; do
	[[ -s $root$f ]] || { echo "deb-test: $f missing from the package" >&2; exit 1; }
done

echo "== deb-test: the demo from /tmp"
chroot "$root" env HOME=/tmp sh -c '
	set -e
	cd /tmp
	proscenium version
	proscenium make-tiny /tmp/demo
	proscenium synth --model /tmp/demo --text "Hello from the package." --max-frames 8 --seed 1 --out /tmp/take.wav
	proscenium gpu probe --json >/tmp/probe.json || true
'
size=$(stat -c %s "$root/tmp/take.wav")
want=$((44 + 8 * 2048 * 2))
if ((size != want)); then
	echo "deb-test: take.wav has $size bytes, want $want (8 frames of 16-bit PCM)" >&2
	exit 1
fi
grep -q '"available"' "$root/tmp/probe.json" || { echo "deb-test: gpu probe --json printed no report" >&2; exit 1; }
echo "== deb-test: $name installed and ran the demo in a clean $suite root in $((SECONDS - start)) s"
