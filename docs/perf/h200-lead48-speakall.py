#!/usr/bin/env python3
"""Speak all through the studio's service of `proscenium serve --ui` at full geometry (session 48): N lines of FRAMES
frames each (random weights: every take runs to its frame limit), spoken one at a time (POST /api/Speak, each followed
to its end: Speak all on the CPU, and everywhere before eedebe2) and in groups of BATCH (POST /api/SpeakLines: Speak
all on the GPU since eedebe2), two rounds each, alternating. For each round: the wall time from the first request to
the last take's end, the takes' audio seconds per wall second, and each take's first audio and real-time factor.
Arguments: PORT N FRAMES BATCH."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from studiocast import Studio
port, n, frames, batch = (int(a) for a in sys.argv[1:5])
st = Studio(port); call = st.call
st.warm_up()

def request(i, rnd):
    return {'text': f'Line {i + 1} of the scene, round {rnd}.', 'sampling': {'temperature': 1, 'top_p': 0.9, 'top_k': 30},
            'seed': 100 * rnd + i, 'max_frames': frames}

def ended(ids, t0):
    while True:
        got = {t['id']: t for t in call('Takes') if t['id'] in ids}
        if len(got) == len(ids) and all(t['state'] not in ('running',) for t in got.values()):
            return [got[i] for i in ids]
        if time.perf_counter() - t0 > 120:
            raise SystemExit(f'takes {ids} did not end in 120 s')
        time.sleep(0.01)

def report(label, t0, takes):
    wall = time.perf_counter() - t0
    fins = [t.get('finish') or {} for t in takes]
    audio = sum(f.get('audio_s', 0) for f in fins)
    states = sorted({t['state'] for t in takes})
    print(f"{label}: {len(takes)} takes ({','.join(states)}) in {wall:.3f} s wall, {audio:.2f} s of audio, "
          f"{audio / wall:.2f} audio s per s; first audio {min(f.get('time_to_first_audio_ms', 0) for f in fins):.1f}–"
          f"{max(f.get('time_to_first_audio_ms', 0) for f in fins):.1f} ms, each RTF "
          f"{min(f.get('real_time_factor', 0) for f in fins):.4f}–{max(f.get('real_time_factor', 0) for f in fins):.4f}")
    return wall

walls = {'one at a time': [], f'groups of {batch}': []}
for rnd in (1, 2):
    t0 = time.perf_counter(); done = []
    for i in range(n):
        tk = call('Speak', request(i, rnd))
        done += ended([tk['id']], time.perf_counter())
    walls['one at a time'].append(report(f'round {rnd}, one at a time', t0, done))
    t0 = time.perf_counter(); done = []
    for k in range(0, n, batch):
        started = call('SpeakLines', [{'request': request(i, rnd + 10), 'cast': []} for i in range(k, min(n, k + batch))])
        done += ended([t['id'] for t in started], time.perf_counter())
    walls[f'groups of {batch}'].append(report(f'round {rnd}, groups of {batch}', t0, done))
seq, grp = walls.values()
print(f'Speak all of {n} lines of {frames} frames: one at a time {min(seq):.3f} s, groups of {batch} {min(grp):.3f} s '
      f'(best of two): {min(seq) / min(grp):.2f}x')
