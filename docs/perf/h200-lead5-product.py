#!/usr/bin/env python3
"""Through `proscenium serve` at full geometry: a voice made by POST /v1/audio/voices from a 10 s
recording, then two streamed requests in it (first byte at the client), then one in the default
voice."""
import io, json, sys, time, urllib.request, uuid, wave
port = int(sys.argv[1]); ref = sys.argv[2]
w = wave.open(ref); frames = w.readframes(w.getnframes()); rate = w.getframerate()
buf = io.BytesIO(); o = wave.open(buf, 'wb'); o.setnchannels(1); o.setsampwidth(2); o.setframerate(rate)
o.writeframes(frames * 4); o.close(); audio = buf.getvalue()   # 4 × 2.5 s = 10 s
b = uuid.uuid4().hex
parts = [f'--{b}\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n'.encode(),
         f'--{b}\r\nContent-Disposition: form-data; name="transcript"\r\n\r\nThe quick brown fox jumps over the lazy dog, four times over.\r\n'.encode(),
         f'--{b}\r\nContent-Disposition: form-data; name="audio"; filename="ada.wav"\r\nContent-Type: audio/wav\r\n\r\n'.encode() + audio + b'\r\n',
         f'--{b}--\r\n'.encode()]
t0 = time.perf_counter()
r = urllib.request.urlopen(urllib.request.Request(f'http://127.0.0.1:{port}/v1/audio/voices', data=b''.join(parts),
    headers={'Content-Type': f'multipart/form-data; boundary={b}'}), timeout=120)
print(f'voice created: {r.status} in {1000*(time.perf_counter()-t0):.0f} ms')
def speak(voice, i):
    body = json.dumps({"model": "drama-3", "input": "A line of the script, spoken in the voice.", "voice": voice,
                       "response_format": "pcm", "stream_format": "audio", "seed": i, "max_frames": 100}).encode()
    t0 = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(f'http://127.0.0.1:{port}/v1/audio/speech', data=body,
            headers={'Content-Type': 'application/json'}), timeout=120) as r:
        first = None; n = 0
        while True:
            c = r.read1(65536)
            if not c: break
            if first is None: first = time.perf_counter() - t0
            n += len(c)
    print(f'{voice} request {i}: first byte {1000*first:.1f} ms, whole {1000*(time.perf_counter()-t0):.0f} ms, {n} bytes')
speak('default', 1); speak('Ada', 1); speak('Ada', 2); speak('Ada', 3); speak('default', 2)
