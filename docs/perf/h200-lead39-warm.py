#!/usr/bin/env python3
"""One streamed speech request in the default voice (no reference prefix) through `proscenium serve`, read to its
end: a scheduler in use, whose step under a real-time bound is measured, before the requests a script times."""
import http.client, json, sys, time
port = int(sys.argv[1])
c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
body = json.dumps({"model": "drama-3", "input": "A warm-up line.", "voice": "alloy", "response_format": "pcm",
                   "stream_format": "audio", "seed": 7, "max_frames": 100}).encode()
t0 = time.perf_counter()
c.request("POST", "/v1/audio/speech", body=body, headers={"Content-Type": "application/json"})
r = c.getresponse(); n = len(r.read())
print(f'warm-up: status {r.status}, {n} bytes in {1000*(time.perf_counter()-t0):.0f} ms')
