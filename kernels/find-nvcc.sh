#!/bin/sh
# Prints the newest nvcc on this machine (highest "release X.Y"), or nothing.
# Candidates: $PATH, /usr/local/cuda*/bin, /usr/bin.
best=""; bestv=0
for n in $(command -v nvcc 2>/dev/null) /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc /usr/bin/nvcc; do
	[ -x "$n" ] || continue
	v=$("$n" --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1 \2/p' | awk '{print $1*100+$2}')
	[ -n "$v" ] || continue
	if [ "$v" -gt "$bestv" ]; then best=$n; bestv=$v; fi
done
echo "$best"
