#!/usr/bin/env python3
"""Through `proscenium serve`: a new voice's first take, primed or not (session 40). One warm-up request in the
default voice; then voice Ada is made by POST /v1/audio/voices from a 10 s recording (h200-lead5-product.py's), the
script waits WAIT seconds (a user typing the first line; a serve that primes does so meanwhile), and two streamed
requests in Ada follow, one after another: the first byte of each at the client. Then voice Bea (the same recording,
another transcript: another voice prefix) is made and spoken in at once, without the wait: a take that arrives
while its voice is being primed."""
import io, json, sys, time, urllib.request, uuid, wave
port, ref = int(sys.argv[1]), sys.argv[2]
wait = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
tag = sys.argv[4] if len(sys.argv) > 4 else ""   # a round's voices: new names and transcripts (new voice prefixes)
w = wave.open(ref); frames = w.readframes(w.getnframes()); rate = w.getframerate()
buf = io.BytesIO(); o = wave.open(buf, 'wb'); o.setnchannels(1); o.setsampwidth(2); o.setframerate(rate)
o.writeframes(frames * 4); o.close(); audio = buf.getvalue()   # 4 × 2.5 s = 10 s
def create(name, transcript):
    b = uuid.uuid4().hex
    parts = [f'--{b}\r\nContent-Disposition: form-data; name="name"\r\n\r\n{name}\r\n'.encode(),
             f'--{b}\r\nContent-Disposition: form-data; name="transcript"\r\n\r\n{transcript}\r\n'.encode(),
             f'--{b}\r\nContent-Disposition: form-data; name="audio"; filename="v.wav"\r\nContent-Type: audio/wav\r\n\r\n'.encode() + audio + b'\r\n',
             f'--{b}--\r\n'.encode()]
    t0 = time.perf_counter()
    r = urllib.request.urlopen(urllib.request.Request(f'http://127.0.0.1:{port}/v1/audio/voices', data=b''.join(parts),
        headers={'Content-Type': f'multipart/form-data; boundary={b}'}), timeout=120)
    print(f'voice {name} created: {r.status} in {1000*(time.perf_counter()-t0):.0f} ms')
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
    whole = time.perf_counter() - t0
    st = json.loads(urllib.request.urlopen(urllib.request.Request(f'http://127.0.0.1:{port}/api/Stats', data=b'[]',
        headers={'Content-Type': 'application/json'}), timeout=30).read())
    lt = st.get('last_take') or {}; mem = st.get('memory') or {}
    print(f'{voice} request {i}: first byte {1000*first:.1f} ms, whole {1000*whole:.0f} ms, {n} bytes; the take: voice cached '
          f'{lt.get("voice_cached", False)}, {lt.get("prefill_rows")} of {lt.get("prompt_rows")} rows prefilled, first audio '
          f'{lt.get("time_to_first_audio_ms", 0):.1f} ms; voice cache {mem.get("voice_entries", 0)} entries, {mem.get("voice_cache_bytes", 0)} bytes')
speak('default', 1)
create('Ada' + tag, f'The quick brown fox jumps over the lazy dog, four times over.{tag}')
time.sleep(wait)
speak('Ada' + tag, 1); speak('Ada' + tag, 2)
create('Bea' + tag, f'A second voice from the same recording, named by another transcript.{tag}')
speak('Bea' + tag, 1); speak('Bea' + tag, 2)
