import { describe, expect, it } from 'vitest';
import { mergeChange } from './settings';
import type { Settings } from './types';

const base: Settings = {
  script: 'Draft.',
  sampling: { temperature: 1, top_p: 0.9, top_k: 30 },
  seed: 0,
  max_frames: 2048,
  model_dir: '',
  presets: [],
  memory_cap_bytes: 0,
  output_device: 'default',
  volume: 1,
  server_port: 7860,
  takes_limit_bytes: 2 << 30,
  voices: [],
  isolate_engine: false,
  voice_library_max_bytes: 256 * 2 ** 20,
  batch: 0,
  voice_cache_bytes: 0,
  lexicon: [],
};

describe('mergeChange', () => {
  it('keeps a change that landed after the copy was made', () => {
    const latest = { ...base, sampling: { ...base.sampling, temperature: 0.65 } }; // saved meanwhile
    const next = { ...base, script: 'New draft.' }; // made from the older copy
    expect(mergeChange(base, next, latest)).toEqual({ ...latest, script: 'New draft.' });
  });
  it('a save that changes nothing changes nothing', () => {
    const latest = { ...base, seed: 5 };
    expect(mergeChange(base, { ...base }, latest)).toEqual(latest);
  });
});
