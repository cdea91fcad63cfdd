#!/usr/bin/env python3
# carry-strip.py BIN OUT FILE...: a device bundle's binary without the repository files it embeds
# (engine/demo/codec.pth, qwen3/tokenizer.json.gz: 11.6 MB of the 12 MB a bundle may take); prints the
# splice plan carry-splice.py reads on the device, where the checkout has the same files.
# strip.py BIN OUT FILE... : writes OUT = BIN with each FILE's bytes (found once, verbatim) cut out,
# and prints a splice plan "offset length path" per file (offsets in the stripped output, ascending).
import sys
bin_path, out_path, files = sys.argv[1], sys.argv[2], sys.argv[3:]
data = open(bin_path, 'rb').read()
cuts = []
for f in files:
    blob = open(f, 'rb').read()
    i = data.find(blob)
    assert i >= 0, f
    assert data.find(blob, i + 1) < 0, f + " twice"
    cuts.append((i, len(blob), f))
cuts.sort()
out, pos, shift = bytearray(), 0, 0
plan = []
for i, n, f in cuts:
    out += data[pos:i]
    plan.append((i - shift, n, f))
    pos, shift = i + n, shift + n
out += data[pos:]
open(out_path, 'wb').write(out)
for p in plan:
    print(*p)
