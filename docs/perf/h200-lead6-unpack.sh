#!/bin/bash
# unpack.sh CARRYDIR DEST: restores the stripped binaries (carry-splice.py with this checkout's
# files) and checks each against its sha256.
set -eu
C=$1; D=$2; mkdir -p $D/.s
xz -dc $C/bundle.tar.xz | tar xf - -C $D/.s
while read n sha; do
  python3 docs/perf/carry-splice.py $D/.s/$n $D/.s/$n.plan $D/$n .
  echo "$sha  $D/$n" | sha256sum -c --quiet || { echo "SHA MISMATCH $n"; exit 3; }
  chmod +x $D/$n
done < $D/.s/MANIFEST
rm -rf $D/.s
[ -f $C/lib.tar.xz ] && tar xJf $C/lib.tar.xz -C $D
echo "unpacked $(ls $D | tr '\n' ' ')"
