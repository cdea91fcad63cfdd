#!/usr/bin/env python3
"""The whole script in a cast of two voices, through the studio's service of `proscenium serve --ui` (session 41).
A warm-up request in the default voice; then voices Ada and Bea are made by the studio's CreateVoice from a 10 s
recording (two transcripts: two voice prefixes), a project is created and saved with the cast [Ada, Bea] (a build
that primes the voices together does so now), the script waits WAIT seconds (the user reading the script), and the
studio speaks: the whole script in both voices twice (SpeakCast with the cast: one prompt with both references),
then a line in Ada alone. After each take, the readout the studio shows (POST /api/Stats): the take's first audio,
rows prefilled, whether its voice prefix came from the voice cache; and the cache's entries and bytes."""
import base64, io, json, sys, time, urllib.request, wave
port, ref = int(sys.argv[1]), sys.argv[2]
wait = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
tag = sys.argv[4] if len(sys.argv) > 4 else ""   # a round's voices and project: new names and transcripts
base = f'http://127.0.0.1:{port}/api/'
def call(method, *args):
    r = urllib.request.urlopen(urllib.request.Request(base + method, data=json.dumps(list(args)).encode(),
        headers={'Content-Type': 'application/json'}), timeout=120)
    return json.loads(r.read() or b'null')
w = wave.open(ref); frames = w.readframes(w.getnframes()); rate = w.getframerate()
buf = io.BytesIO(); o = wave.open(buf, 'wb'); o.setnchannels(1); o.setsampwidth(2); o.setframerate(rate)
o.writeframes(frames * 4); o.close(); audio = base64.b64encode(buf.getvalue()).decode()   # 4 × 2.5 s = 10 s
body = json.dumps({"model": "drama-3", "input": "A warm-up line.", "voice": "default", "response_format": "pcm",
                   "seed": 1, "max_frames": 20}).encode()
urllib.request.urlopen(urllib.request.Request(f'http://127.0.0.1:{port}/v1/audio/speech', data=body,
    headers={'Content-Type': 'application/json'}), timeout=120).read()
ada, bea = 'Ada' + tag, 'Bea' + tag
for name, tr in ((ada, f'The quick brown fox jumps over the lazy dog, four times over.{tag}'),
                 (bea, f'A second voice from the same recording, named by another transcript.{tag}')):
    t0 = time.perf_counter(); call('CreateVoice', name, tr, audio)
    print(f'voice {name} created in {1000*(time.perf_counter()-t0):.0f} ms')
p = call('CreateProject', 'Scene' + tag)
p['cast'] = [ada, bea]
p['script'] = '<|speaker:0|>The first line, in the first voice.\n<|speaker:1|>And the answer, in the second.'
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
take('whole script 1', p['script'], [ada, bea], 1)
take('whole script 2', p['script'], [ada, bea], 2)
take('a line in Ada', '<|speaker:0|>A line of the script, in the first voice.', [ada], 3)
