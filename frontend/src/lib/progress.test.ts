import { describe, expect, it } from 'vitest';
import { takeProgress } from './progress';
import type { Take } from './types';

const t = (frames: number, fps: number, samples: number) =>
  ({ started_ms: 1_000_000, frames, frames_per_s: fps, samples, sample_rate_hz: 44100, request: { max_frames: 400 } }) as unknown as Take;

describe('takeProgress', () => {
  it('reads a take under way', () => {
    const p = takeProgress(t(100, 50, 44100 * 4), 1_002_000, 1_000_250);
    expect(p).toEqual({ frames: '100 / 400 frames', elapsed: '2.0 s elapsed', remaining: 'at most 6.0 s left', rtf: 'RTF 0.50', firstAudio: 'first audio 0.25 s' });
  });
  it('shows no figures before they exist', () => {
    const p = takeProgress(t(0, 0, 0), 1_000_100);
    expect([p.remaining, p.rtf, p.firstAudio]).toEqual(['— left', 'RTF —', 'no audio yet']);
  });
});
