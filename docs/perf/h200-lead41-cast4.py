#!/usr/bin/env python3
"""The whole script in a cast of four voices of different lengths, through the studio's service of `proscenium serve
--ui` (session 41, run 3). A warm-up request; voices V1–V4 made by the studio's CreateVoice from the 10 s recording
cut to 10, 9, 8 and 7 s; a project saved with the cast [V1, V2, V3, V4] (this build primes the voices together when
the cache holds them beside the four alone, by the bound a state's shape gives; the build before bounded them by the
sum of the four states, which the default cache does not hold); WAIT seconds; the whole script in the four voices
twice, then a line in V4. After each take, the studio's readout (POST /api/Stats)."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from studiocast import Studio, recording
port, ref = int(sys.argv[1]), sys.argv[2]
wait = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
tag = sys.argv[4] if len(sys.argv) > 4 else ""
st = Studio(port); call = st.call
st.warm_up()
names = [f'V{i}{tag}' for i in range(1, 5)]
for i, (name, secs) in enumerate(zip(names, (10, 9, 8, 7))):
    t0 = time.perf_counter(); call('CreateVoice', name, f'Voice number {i + 1} reads the same recording.{tag}', recording(ref, secs))
    print(f'voice {name} ({secs} s) created in {1000*(time.perf_counter()-t0):.0f} ms')
p = call('CreateProject', 'Four' + tag)
p['cast'] = names
p['script'] = '\n'.join(f'<|speaker:{i}|>Line {i + 1} of the scene.' for i in range(4))
call('SaveProject', p)
print(f'project {p["name"]} saved with the cast {p["cast"]}')
time.sleep(wait)
st.take('whole script 1', p['script'], names, 1)
st.take('whole script 2', p['script'], names, 2)
st.take('a line in V4', '<|speaker:0|>A line of the script, in the fourth voice.', [names[3]], 3)
