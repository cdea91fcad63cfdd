#!/usr/bin/env python3
"""The whole script in a cast of N voices, through the studio's service of `proscenium serve --ui` (session 42): the
voice cache's size against a cast larger than the default holds together. A warm-up request; voices V1…VN made by the
studio's CreateVoice from the 10 s recording cut to the lengths given; a project saved with the cast [V1 … VN]; WAIT
seconds (the primer reads each voice, then the voices together when the cache holds them beside the voices alone);
the whole script in the N voices twice, then a line in VN. After each take, the studio's readout (POST /api/Stats).
Arguments: PORT REF WAIT SECONDS,SECONDS,… [TAG]."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from studiocast import Studio, recording
port, ref, wait = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
lengths = [float(x) for x in sys.argv[4].split(',')]
tag = sys.argv[5] if len(sys.argv) > 5 else ""
st = Studio(port); call = st.call
st.warm_up()
names = [f'V{i}{tag}' for i in range(1, len(lengths) + 1)]
for i, (name, secs) in enumerate(zip(names, lengths)):
    t0 = time.perf_counter(); call('CreateVoice', name, f'Voice number {i + 1} reads the same recording.{tag}', recording(ref, secs))
    print(f'voice {name} ({secs:g} s) created in {1000*(time.perf_counter()-t0):.0f} ms')
p = call('CreateProject', f'Cast of {len(names)}{tag}')
p['cast'] = names
p['script'] = '\n'.join(f'<|speaker:{i}|>Line {i + 1} of the scene.' for i in range(len(names)))
call('SaveProject', p)
print(f'project {p["name"]} saved with the cast {p["cast"]}')
time.sleep(wait)
st.take('whole script 1', p['script'], names, 1)
st.take('whole script 2', p['script'], names, 2)
st.take(f'a line in {names[-1]}', '<|speaker:0|>A line of the script, in the last voice.', [names[-1]], 3)
