#!/usr/bin/env python3
"""The studio's service through `proscenium serve --ui` at full geometry (issue 28: "the studio's
readout shows the same"): a voice made by the studio's CreateVoice from a 10 s recording, then two
takes cast in it by SpeakCast (the studio's Speak button with a voice), each followed until it
finishes; after each, the readout the studio shows (POST /api/Stats: the last take's first audio,
rows prefilled, whether the voice came from the voice cache, and the device memory with the voice
cache's bytes). Then the readout after the speech API's last request, which the studio records."""
import base64, io, json, sys, time, urllib.request, wave
port = int(sys.argv[1]); ref = sys.argv[2]
base = f'http://127.0.0.1:{port}/api/'
def call(method, *args):
    r = urllib.request.urlopen(urllib.request.Request(base + method, data=json.dumps(list(args)).encode(),
        headers={'Content-Type': 'application/json'}), timeout=120)
    return json.loads(r.read() or b'null')
def readout(label):
    st = call('Stats'); lt = st.get('last_take') or {}; mem = st.get('memory') or {}
    cache = {k: v for k, v in mem.items() if 'voice' in k or 'prefix' in k}
    print(f"{label}: readout first audio {lt.get('time_to_first_audio_ms', 0):.1f} ms, prompt rows "
          f"{lt.get('prompt_rows')}, prefilled {lt.get('prefill_rows')}, voice cached {lt.get('voice_cached', False)}, "
          f"batch {lt.get('batch')}, RTF {lt.get('real_time_factor', 0):.4f}; memory {json.dumps(cache)} "
          f"used {mem.get('used_bytes')} peak {mem.get('peak_bytes')}")
w = wave.open(ref); frames = w.readframes(w.getnframes()); rate = w.getframerate()
buf = io.BytesIO(); o = wave.open(buf, 'wb'); o.setnchannels(1); o.setsampwidth(2); o.setframerate(rate)
o.writeframes(frames * 4); o.close()   # 4 × 2.5 s = 10 s
t0 = time.perf_counter()
call('CreateVoice', 'Bea', 'Bea reads a different line: a lazy dog naps while the quick brown fox runs by.', base64.b64encode(buf.getvalue()).decode())
print(f'studio voice created in {1000*(time.perf_counter()-t0):.0f} ms')
for i in (1, 2):
    req = {'text': 'A line of the script, spoken in the voice.', 'sampling': {'temperature': 1, 'top_p': 0.9, 'top_k': 30},
           'seed': i, 'max_frames': 100}
    t0 = time.perf_counter(); take = call('SpeakCast', {'request': req, 'cast': ['Bea']})
    while True:
        t = next((t for t in call('Takes') if t['id'] == take['id']), None)
        if t and t['state'] not in ('running', 'queued', 'starting'): break
        if time.perf_counter() - t0 > 60: print('take did not finish in 60 s'); break
        time.sleep(0.05)
    print(f"studio take {take['id']} ({t and t['state']}, {t and t['frames']} frames): client saw it end after "
          f"{1000*(time.perf_counter()-t0):.0f} ms; take's own first audio "
          f"{((t or {}).get('finish') or {}).get('time_to_first_audio_ms', 0):.1f} ms")
    readout(f'after studio take {i}')
