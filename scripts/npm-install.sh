#!/usr/bin/env bash
# npm-install.sh DIR: `npm ci` in DIR unless node_modules already matches
# DIR/package-lock.json (a stamp holds the lock file's hash), so repeating
# `make deps` costs nothing.
set -euo pipefail
dir=${1:?usage: npm-install.sh DIR}
lock="$dir/package-lock.json"
stamp="$dir/node_modules/.proscenium-lock-sha256"
want=$(sha256sum "$lock" | cut -d' ' -f1)
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
	echo "== npm: $dir up to date"
	exit 0
fi
echo "== npm ci in $dir"
npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
echo "$want" >"$stamp"
