"""What the session 41 cast scripts (h200-lead41-cast.py, h200-lead41-cast4.py) share: the studio's service through
`proscenium serve --ui` (POST /api/METHOD with the arguments as a JSON list), a reference recording cut to length, a
warm-up request, and a take spoken with a cast and followed to its end with the studio's readout."""
import base64, io, json, time, urllib.request, wave

class Studio:
    def __init__(self, port):
        self.port = port

    def call(self, method, *args):
        r = urllib.request.urlopen(urllib.request.Request(f'http://127.0.0.1:{self.port}/api/{method}',
            data=json.dumps(list(args)).encode(), headers={'Content-Type': 'application/json'}), timeout=120)
        return json.loads(r.read() or b'null')

    def warm_up(self):
        """One short request in the default voice through the speech API."""
        body = json.dumps({"model": "drama-3", "input": "A warm-up line.", "voice": "default", "response_format": "pcm",
                           "seed": 1, "max_frames": 20}).encode()
        urllib.request.urlopen(urllib.request.Request(f'http://127.0.0.1:{self.port}/v1/audio/speech', data=body,
            headers={'Content-Type': 'application/json'}), timeout=120).read()

    def take(self, label, text, cast, seed):
        """Speaks text in the cast voices (SpeakCast), waits for the take to end, prints the readout."""
        req = {'text': text, 'sampling': {'temperature': 1, 'top_p': 0.9, 'top_k': 30}, 'seed': seed, 'max_frames': 100}
        t0 = time.perf_counter(); tk = self.call('SpeakCast', {'request': req, 'cast': cast})
        while True:
            t = next((t for t in self.call('Takes') if t['id'] == tk['id']), None)
            if t and t['state'] not in ('running', 'queued', 'starting'): break
            if time.perf_counter() - t0 > 60: print('take did not finish in 60 s'); break
            time.sleep(0.05)
        st = self.call('Stats'); lt = st.get('last_take') or {}; mem = st.get('memory') or {}
        print(f"{label}: take {tk['id']} ({t and t['state']}), readout first audio {lt.get('time_to_first_audio_ms', 0):.1f} ms, "
              f"{lt.get('prefill_rows')} of {lt.get('prompt_rows')} rows prefilled, voice cached {lt.get('voice_cached', False)}; "
              f"voice cache {mem.get('voice_entries', 0)} entries, {mem.get('voice_cache_bytes', 0)} bytes; "
              f"ready {sorted(st.get('voices_ready') or [])}, whole script ready {st.get('cast_ready', False)}")

def recording(ref, seconds=10.0):
    """ref (a 2.5 s WAV) repeated, cut to seconds, as base64 WAV (the studio's CreateVoice argument)."""
    w = wave.open(ref); frames = w.readframes(w.getnframes()); rate = w.getframerate(); width = w.getsampwidth()
    buf = io.BytesIO(); o = wave.open(buf, 'wb'); o.setnchannels(1); o.setsampwidth(width); o.setframerate(rate)
    n = int(seconds * rate) * width
    o.writeframes((frames * (n // max(len(frames), 1) + 1))[:n]); o.close()
    return base64.b64encode(buf.getvalue()).decode()
