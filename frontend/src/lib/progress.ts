// What a running take has done so far, in words a user reads: frames made
// of the most it may make, time since it started and what may remain, the
// live real-time factor and when the first audio came. Nothing is shown
// that was not measured ("—" until it is).
import type { Take } from './types';
import { NONE } from './format';

export interface TakeProgress {
  frames: string;
  elapsed: string;
  remaining: string;
  rtf: string;
  firstAudio: string;
}

function seconds(s: number): string {
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)}:${(s % 60).toFixed(0).padStart(2, '0')}`;
}

/**
 * t: the running take; nowMs: the clock the service's started_ms uses
 * (Date.now() on the same machine); firstAudioMs: when its first audio
 * arrived (undefined: not yet).
 */
export function takeProgress(t: Take, nowMs: number, firstAudioMs?: number): TakeProgress {
  const max = t.request.max_frames;
  const elapsed = Math.max(0, (nowMs - t.started_ms) / 1000);
  const audio = t.sample_rate_hz > 0 ? t.samples / t.sample_rate_hz : 0;
  const left = max - t.frames;
  return {
    frames: `${t.frames} / ${max} frames`,
    elapsed: `${seconds(elapsed)} elapsed`,
    // The model may end the take sooner: this is the longest it can take.
    remaining: t.frames_per_s > 0 && left >= 0 ? `at most ${seconds(left / t.frames_per_s)} left` : `${NONE} left`,
    rtf: audio > 0 ? `RTF ${(elapsed / audio).toFixed(2)}` : `RTF ${NONE}`,
    firstAudio: firstAudioMs !== undefined ? `first audio ${((firstAudioMs - t.started_ms) / 1000).toFixed(2)} s` : 'no audio yet',
  };
}
