#!/usr/bin/env python3
"""N streamed speech requests sent at the same instant to a running `proscenium serve`, each from
a client that has already connected (one keep-alive connection per request, opened and used
once for GET /v1/models beforehand, as an HTTP client with a connection pool would be): each
request's first byte and last byte at the client, from the moment its POST is written.
h200-lead5-concurrent.py, which opens its connections inside the timed window from a cold
Python process, measured ≈ 80 ms more than the server took (session 9 run 2: the serve log's
durations against the client's last bytes)."""
import http.client, json, sys, threading, time
port, n = int(sys.argv[1]), int(sys.argv[2])
res = [None] * n
barrier = threading.Barrier(n)
def one(i):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("GET", "/v1/models"); r = c.getresponse(); r.read()
    body = json.dumps({"model": "drama-3", "input": f"Take number {i}: the quick brown fox jumps over the lazy dog.",
                       "response_format": "pcm", "stream_format": "audio", "seed": i + 1, "max_frames": 120}).encode()
    barrier.wait()
    t0 = time.perf_counter()
    c.request("POST", "/v1/audio/speech", body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    first = None; total = 0
    while True:
        b = r.read1(65536)
        if not b: break
        if first is None: first = time.perf_counter() - t0
        total += len(b)
    res[i] = (first, time.perf_counter() - t0, total, r.status)
    c.close()
th = [threading.Thread(target=one, args=(i,)) for i in range(n)]
[t.start() for t in th]; [t.join() for t in th]
for i, r in enumerate(res):
    print(f"request {i}: status {r[3]}, first byte {1000*r[0]:.1f} ms, last byte {1000*r[1]:.1f} ms, {r[2]} bytes")
print(f"worst first byte {1000*max(r[0] for r in res):.1f} ms; every first byte before the first request finished: {max(r[0] for r in res) < min(r[1] for r in res)}")
