#!/usr/bin/env python3
"""The whole script in a cast of four voices of different lengths, through the studio's service of `proscenium serve
--ui` (session 41, run 3). A warm-up request; voices V1–V4 made by the studio's CreateVoice from the 10 s recording
cut to 10, 9, 8 and 7 s; a project saved with the cast [V1, V2, V3, V4] (this build primes the voices together when
the cache holds them beside the four alone, by the bound a state's shape gives; the build before bounded them by the
sum of the four states, which the default cache does not hold); WAIT seconds; the whole script in the four voices
twice, then a line in V4. After each take, the studio's readout (POST /api/Stats)."""
import base64, io, json, sys, time, urllib.request, wave
port, ref = int(sys.argv[1]), sys.argv[2]
wait = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
tag = sys.argv[4] if len(sys.argv) > 4 else ""
base = f'http://127.0.0.1:{port}/api/'
def call(method, *args):
    r = urllib.request.urlopen(urllib.request.Request(base + method, data=json.dumps(list(args)).encode(),
        headers={'Content-Type': 'application/json'}), timeout=120)
    return json.loads(r.read() or b'null')
w = wave.open(ref); frames = w.readframes(w.getnframes()); rate = w.getframerate(); width = w.getsampwidth()
whole = frames * 4   # 4 × 2.5 s = 10 s
def recording(seconds):
    buf = io.BytesIO(); o = wave.open(buf, 'wb'); o.setnchannels(1); o.setsampwidth(width); o.setframerate(rate)
    o.writeframes(whole[:int(seconds * rate) * width]); o.close()
    return base64.b64encode(buf.getvalue()).decode()
body = json.dumps({"model": "drama-3", "input": "A warm-up line.", "voice": "default", "response_format": "pcm",
                   "seed": 1, "max_frames": 20}).encode()
urllib.request.urlopen(urllib.request.Request(f'http://127.0.0.1:{port}/v1/audio/speech', data=body,
    headers={'Content-Type': 'application/json'}), timeout=120).read()
names = [f'V{i}{tag}' for i in range(1, 5)]
for i, (name, secs) in enumerate(zip(names, (10, 9, 8, 7))):
    t0 = time.perf_counter(); call('CreateVoice', name, f'Voice number {i + 1} reads the same recording.{tag}', recording(secs))
    print(f'voice {name} ({secs} s) created in {1000*(time.perf_counter()-t0):.0f} ms')
p = call('CreateProject', 'Four' + tag)
p['cast'] = names
p['script'] = '\n'.join(f'<|speaker:{i}|>Line {i + 1} of the scene.' for i in range(4))
call('SaveProject', p)
print(f'project {p["name"]} saved with the cast {p["cast"]}')
time.sleep(wait)
def take(label, text, cast, seed):
    req = {'text': text, 'sampling': {'temperature': 1, 'top_p': 0.9, 'top_k': 30}, 'seed': seed, 'max_frames': 100}
    t0 = time.perf_counter(); tk = call('SpeakCast', {'request': req, 'cast': cast})
    while True:
        t = next((t for t in call('Takes') if t['id'] == tk['id']), None)
        if t and t['state'] not in ('running', 'queued', 'starting'): break
        if time.perf_counter() - t0 > 60: print('take did not finish in 60 s'); break
        time.sleep(0.05)
    st = call('Stats'); lt = st.get('last_take') or {}; mem = st.get('memory') or {}
    print(f"{label}: take {tk['id']} ({t and t['state']}), readout first audio {lt.get('time_to_first_audio_ms', 0):.1f} ms, "
          f"{lt.get('prefill_rows')} of {lt.get('prompt_rows')} rows prefilled, voice cached {lt.get('voice_cached', False)}; "
          f"voice cache {mem.get('voice_entries', 0)} entries, {mem.get('voice_cache_bytes', 0)} bytes")
take('whole script 1', p['script'], names, 1)
take('whole script 2', p['script'], names, 2)
take('a line in V4', '<|speaker:0|>A line of the script, in the fourth voice.', [names[3]], 3)
