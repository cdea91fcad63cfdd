#!/usr/bin/env python3
"""Four streamed speech requests sent together to a running `proscenium serve`: each one's
first byte and last byte at the client, and the batch the server says it ran in."""
import json, sys, threading, time, urllib.request
port, n = int(sys.argv[1]), int(sys.argv[2])
res = [None] * n
def one(i):
    body = json.dumps({"model": "drama-3", "input": f"Take number {i}: the quick brown fox jumps over the lazy dog.",
                       "response_format": "pcm", "stream_format": "audio", "seed": i + 1, "max_frames": 120}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/audio/speech", data=body,
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as r:
        first = None; total = 0
        while True:
            b = r.read1(65536) if hasattr(r, "read1") else r.read(65536)
            if not b: break
            if first is None: first = time.perf_counter() - t0
            total += len(b)
        res[i] = (first, time.perf_counter() - t0, total, r.headers.get("X-Batch"))
th = [threading.Thread(target=one, args=(i,)) for i in range(n)]
[t.start() for t in th]; [t.join() for t in th]
for i, r in enumerate(res):
    print(f"request {i}: first byte {1000*r[0]:.1f} ms, last byte {1000*r[1]:.1f} ms, {r[2]} bytes, X-Batch {r[3]}")
print(f"every first byte before the first request finished: {max(r[0] for r in res) < min(r[1] for r in res)}")
