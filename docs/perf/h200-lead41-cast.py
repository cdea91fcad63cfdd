#!/usr/bin/env python3
"""The whole script in a cast of two voices, through the studio's service of `proscenium serve --ui` (session 41).
A warm-up request in the default voice; then voices Ada and Bea are made by the studio's CreateVoice from a 10 s
recording (two transcripts: two voice prefixes), a project is created and saved with the cast [Ada, Bea] (a build
that primes the voices together does so now), the script waits WAIT seconds (the user reading the script), and the
studio speaks: the whole script in both voices twice (SpeakCast with the cast: one prompt with both references),
then a line in Ada alone. After each take, the readout the studio shows (POST /api/Stats): the take's first audio,
rows prefilled, whether its voice prefix came from the voice cache; and the cache's entries and bytes."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from studiocast import Studio, recording
port, ref = int(sys.argv[1]), sys.argv[2]
wait = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
tag = sys.argv[4] if len(sys.argv) > 4 else ""   # a round's voices and project: new names and transcripts
st = Studio(port); call = st.call
audio = recording(ref)   # 10 s
st.warm_up()
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
st.take('whole script 1', p['script'], [ada, bea], 1)
st.take('whole script 2', p['script'], [ada, bea], 2)
st.take('a line in Ada', '<|speaker:0|>A line of the script, in the first voice.', [ada], 3)
