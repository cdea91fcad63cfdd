import { describe, expect, it } from 'vitest';
import { playerOutput, soundSummary } from './sound';
import type { StudioStatus } from './types';

const studio = (state: string, message: string) => ({ audio: { state, message } }) as StudioStatus;

describe('sound words', () => {
  it('never shows the library text', () => {
    const alsa = studio('unavailable', 'no audio output device: oto: ALSA error at snd_pcm_open: No such file or directory');
    expect(soundSummary(alsa, false)).toBe('No sound card — takes still run; export to listen');
    expect(playerOutput(alsa, false)).toBe('no sound card');
    expect(soundSummary(studio('ready', 'audio output ready (44100 Hz mono)'), false)).toBe('Sound card ready');
    expect(soundSummary(alsa, true)).toBe('Audio plays in this browser');
    expect(playerOutput(null, true)).toBe('plays in this browser');
  });
});
