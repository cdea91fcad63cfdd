# Same seed on the GPU through synth, the studio's service (serve --ui /api/) and the speech API (stream and whole);
# a voice created through the API (encoded in the GPU worker) and a take in it.
# Every mismatch prints "FAIL: ..." and the script exits 1; a pass ends with
# "all serve checks passed".
# Usage: servecheck.py TEXT SYNTH.WAV [REFERENCE.wav]
import json, sys, time, struct, urllib.request
from array import array
T, synth_wav = sys.argv[1], sys.argv[2]
ref_wav = sys.argv[3] if len(sys.argv) > 3 else None
B = "http://127.0.0.1:18080"
fails = []
def check(ok, what):
    if not ok:
        fails.append(what)
        print("FAIL:", what)
def post(path, body, raw=False):
    r = urllib.request.Request(B + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=120) as f:
            return f.read() if raw else json.loads(f.read())
    except urllib.error.HTTPError as e:
        raise SystemExit("%s -> %d %s" % (path, e.code, e.read()[:400]))
st = {}
for _ in range(240):
    try:
        st = post("/api/ModelStatus", [])
        if st.get("state") == "loaded": break
    except BaseException: pass
    time.sleep(0.5)
print("model status:", st.get("state"), st.get("message"), (st.get("info") or {}).get("backend_reason"))
if st.get("state") != "loaded" or (st.get("info") or {}).get("backend") != "cuda":
    raise SystemExit("FAIL: the model is not loaded on the GPU: %s" % json.dumps(st)[:400])
def wavdata(b):
    i = 12; fmt = None
    while i < len(b):
        cid, n = b[i:i+4], struct.unpack("<I", b[i+4:i+8])[0]
        if cid == b"fmt ": fmt = struct.unpack("<HHIIHH", b[i+8:i+24])
        if cid == b"data":
            d = b[i+8:i+8+n]
            if fmt[0] == 3: return list(array("f", d))
            return [x / 32768 for x in array("h", d)]
        i += 8 + n + (n & 1)
def maxdiff(a, b):
    n = min(len(a), len(b))
    return max((abs(a[i] - b[i]) for i in range(n)), default=-1)
synth = wavdata(open(synth_wav, "rb").read())
req = {"model": "drama-3", "input": T, "seed": 5, "max_frames": 200, "temperature": 1, "top_p": 0.9, "top_k": 30}
whole = post("/v1/audio/speech", dict(req, response_format="pcm"), raw=True)
stream = post("/v1/audio/speech", dict(req, response_format="pcm", stream=True), raw=True)
wav = wavdata(post("/v1/audio/speech", dict(req, response_format="wav"), raw=True))
print("API pcm whole %d bytes, stream %d bytes, stream == whole: %s" % (len(whole), len(stream), whole == stream))
check(len(whole) > 0 and whole == stream, "the API's streamed pcm differs from the whole reply")
take = post("/api/Speak", [{"text": T, "seed": 5, "max_frames": 200, "sampling": {"temperature": 1, "top_p": 0.9, "top_k": 30}}])
tid = take["id"]
for _ in range(480):
    ts = [t for t in post("/api/Takes", []) if t["id"] == tid][0]
    if ts["state"] != "running": break
    time.sleep(0.25)
fin = ts.get("finish") or {}
print("studio take %d: %s, %s frames, error %r, finish %s, rtf %s, first audio %s ms" % (tid, ts["state"], ts.get("frames"), ts.get("error"), fin.get("reason"), fin.get("real_time_factor"), fin.get("time_to_first_audio_ms")))
check(ts["state"] == "finished" and not ts.get("error") and fin.get("reason") in ("stop", "length"), "the studio take did not finish: %s" % ts["state"])
studio = list(array("f", urllib.request.urlopen(B + "/api/takes/%d/pcm" % tid, timeout=60).read()))
api = [x / 32768 for x in array("h", whole)]
print("samples: synth %d, studio %d, API pcm %d, API wav %d" % (len(synth), len(studio), len(api), len(wav)))
print("synth (float WAV) vs studio (float): bit-identical %s, max diff %.3g" % (synth == studio, maxdiff(synth, studio)))
print("API pcm16 vs studio float: same length %s, max diff %.3g (one 16-bit step is %.3g)" % (len(api) == len(studio), maxdiff(api, studio), 1 / 32768))
print("API wav == API pcm: %s" % (wav == api))
check(len(synth) > 0 and synth == studio, "synth and the studio's take of the same seed differ")
# PCM16 is round(x·32767), read back here as /32768: at most half a step of
# rounding plus |x|/32768 of scale, 1.5 steps.
check(len(api) == len(studio) and maxdiff(api, studio) <= 1.5 / 32768, "the API's pcm16 is not the studio take's audio (max diff %.3g)" % maxdiff(api, studio))
check(wav == api, "the API's wav and pcm replies differ")
s = post("/api/Stats", [])
print("studio readouts (Stats):", json.dumps(s)[:700])

if ref_wav:
    boundary = "----proscenium-check"
    parts = []
    for k, v in (("name", b"gpuvoice"), ("transcript", b"The quick brown fox.")):
        parts.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n" % (boundary, k)).encode() + v + b"\r\n")
    parts.append(("--%s\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"ref.wav\"\r\nContent-Type: audio/wav\r\n\r\n" % boundary).encode() + open(ref_wav, "rb").read() + b"\r\n")
    body = b"".join(parts) + ("--%s--\r\n" % boundary).encode()
    t0 = time.time()
    r = urllib.request.Request(B + "/v1/audio/voices", data=body, headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
    try:
        with urllib.request.urlopen(r, timeout=120) as f:
            print("voice created through the API in %.2f s: %s" % (time.time() - t0, f.read()[:300]))
    except urllib.error.HTTPError as e:
        raise SystemExit("/v1/audio/voices -> %d %s" % (e.code, e.read()[:400]))
    vreq = dict(req, voice="gpuvoice", response_format="pcm")
    vwhole = post("/v1/audio/speech", vreq, raw=True)
    vstream = post("/v1/audio/speech", dict(vreq, stream=True), raw=True)
    print("take in the voice: %d bytes, stream == whole: %s, differs from the default voice: %s" % (len(vwhole), vwhole == vstream, vwhole != whole))
    check(len(vwhole) > 0 and vwhole == vstream, "the take in the voice: streamed pcm differs from the whole reply")
    check(vwhole != whole, "the take in the voice is the default voice's")

if fails:
    raise SystemExit("%d serve checks failed" % len(fails))
print("all serve checks passed")
