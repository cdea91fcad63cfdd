#!/usr/bin/env python3
# carry-splice.py STRIPPED PLAN OUT ROOT: carry-strip.py undone with the files under ROOT (check the
# result's sha256 against the original's).
# splice.py STRIPPED PLAN OUT ROOT: reinserts the files named in PLAN (from strip.py) under ROOT.
import sys
data = open(sys.argv[1], 'rb').read()
plan = [l.split() for l in open(sys.argv[2]) if l.strip()]
out, pos = bytearray(), 0
for off, n, f in plan:
    off, n = int(off), int(n)
    out += data[pos:off]
    blob = open(sys.argv[4] + '/' + f, 'rb').read()
    assert len(blob) == n, f
    out += blob
    pos = off
out += data[pos:]
open(sys.argv[3], 'wb').write(out)
