#!/usr/bin/env python3
"""Through `proscenium serve`: a new voice made by POST /v1/audio/voices from a 10 s recording
(h200-lead5-product.py's), then N streamed speech requests in it sent at the same instant, each
from a client already connected (h200-lead9-concurrent.py's way): each request's first and last
byte at the client. The voice is new to the engine, so the first request's take prefills its
prefix; the others, begun together with it, share that prefill or repeat it."""
import http.client, io, json, sys, threading, time, urllib.request, uuid, wave
port, ref, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
name = sys.argv[4] if len(sys.argv) > 4 else "Ada"
w = wave.open(ref); frames = w.readframes(w.getnframes()); rate = w.getframerate()
buf = io.BytesIO(); o = wave.open(buf, 'wb'); o.setnchannels(1); o.setsampwidth(2); o.setframerate(rate)
o.writeframes(frames * 4); o.close(); audio = buf.getvalue()   # 4 × 2.5 s = 10 s
b = uuid.uuid4().hex
parts = [f'--{b}\r\nContent-Disposition: form-data; name="name"\r\n\r\n{name}\r\n'.encode(),
         f'--{b}\r\nContent-Disposition: form-data; name="transcript"\r\n\r\nThe quick brown fox jumps over the lazy dog, four times over.\r\n'.encode(),
         f'--{b}\r\nContent-Disposition: form-data; name="audio"; filename="v.wav"\r\nContent-Type: audio/wav\r\n\r\n'.encode() + audio + b'\r\n',
         f'--{b}--\r\n'.encode()]
t0 = time.perf_counter()
r = urllib.request.urlopen(urllib.request.Request(f'http://127.0.0.1:{port}/v1/audio/voices', data=b''.join(parts),
    headers={'Content-Type': f'multipart/form-data; boundary={b}'}), timeout=120)
print(f'voice {name} created: {r.status} in {1000*(time.perf_counter()-t0):.0f} ms')
res = [None] * n
barrier = threading.Barrier(n)
def one(i):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("GET", "/v1/models"); r = c.getresponse(); r.read()
    body = json.dumps({"model": "drama-3", "input": "A line of the script, spoken in the voice.", "voice": name,
                       "response_format": "pcm", "stream_format": "audio", "seed": i + 1, "max_frames": 100}).encode()
    barrier.wait()
    t0 = time.perf_counter()
    c.request("POST", "/v1/audio/speech", body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    first = None; total = 0
    while True:
        d = r.read1(65536)
        if not d: break
        if first is None: first = time.perf_counter() - t0
        total += len(d)
    res[i] = (first, time.perf_counter() - t0, total, r.status)
    c.close()
th = [threading.Thread(target=one, args=(i,)) for i in range(n)]
[t.start() for t in th]; [t.join() for t in th]
for i, r in enumerate(res):
    print(f"request {i}: status {r[3]}, first byte {1000*r[0]:.1f} ms, last byte {1000*r[1]:.1f} ms, {r[2]} bytes")
print(f"first bytes {', '.join(f'{1000*r[0]:.1f}' for r in sorted(res))} ms")
