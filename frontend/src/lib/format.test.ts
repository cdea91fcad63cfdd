import { describe, expect, it } from 'vitest';
import { NONE, statusSummary, finishReason, formatBytes, formatMs, formatRTF, formatSeconds, formatTTFA, memoryDevice, memoryReadout, noAudioReason, parseNumber, runningState } from './format';
import type { Finish, Take } from './types';

const finish = (f: Partial<Finish>): Finish => ({
  reason: 'stop',
  frames: 43,
  audio_s: (43 * 2048) / 44100,
  time_to_first_audio_ms: 73.4,
  elapsed_s: 0.1,
  real_time_factor: 0.1 / ((43 * 2048) / 44100),
  stages_s: {},
  ...f,
});

describe('formatBytes', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1536, '1.50 KiB'],
    [3 * 1024 ** 3, '3.00 GiB'],
    [141 * 1024 ** 3 + 512 * 1024 ** 2, '142 GiB'],
  ])('%d → %s', (n, want) => expect(formatBytes(n)).toBe(want));
  it.each([undefined, null, -1, NaN])('%s has no figure', (n) => expect(formatBytes(n)).toBe(NONE));
});

describe('memoryReadout', () => {
  it('shows no numbers without a model', () => {
    expect(memoryReadout(null)).toEqual({ used: NONE, peak: NONE, cap: NONE, device: NONE });
  });
  it('formats used, peak and cap', () => {
    expect(memoryReadout({ device: 'NVIDIA H200', used_bytes: 2 * 1024 ** 3, peak_bytes: 3 * 1024 ** 3, cap_bytes: 0 })).toEqual({
      used: '2.00 GiB',
      peak: '3.00 GiB',
      cap: 'no cap',
      device: 'NVIDIA H200',
    });
  });
});

describe('take figures', () => {
  it('real-time factor: elapsed ÷ audio seconds, three decimals', () => {
    // 0.1 s for 43 frames of 2048 samples at 44.1 kHz (1.997 s) → 0.0501
    expect(formatRTF(finish({}))).toBe('0.050');
  });
  it('time to first audio in ms', () => {
    expect(formatTTFA(finish({}))).toBe('73.4 ms');
    expect(formatMs(2500)).toBe('2.50 s');
  });
  it('no take, or a take with no audio, has no figures', () => {
    expect(formatRTF(undefined)).toBe(NONE);
    expect(formatTTFA(undefined)).toBe(NONE);
    expect(formatRTF(finish({ frames: 0, audio_s: 0, real_time_factor: Infinity }))).toBe(NONE);
    expect(formatTTFA(finish({ frames: 0 }))).toBe(NONE);
  });
});

describe('takes list figures', () => {
  const base: Take = {
    id: 3,
    request: { text: 'Hi.', sampling: { temperature: 0.7, top_p: 0.9, top_k: 30 }, seed: 5, max_frames: 100 },
    state: 'finished',
    frames: 43,
    finish: finish({ reason: 'length' }),
    error: '',
    started_ms: 0,
    name: '',
    frames_per_s: 0,
    samples: 43 * 2048,
    sample_rate_hz: 44100,
    underruns: 0,
    stored: true,
    source: 'studio',
  };
  it('says why a take has no audio', () => {
    expect(noAudioReason(base)).toBe('');
    expect(noAudioReason({ ...base, state: 'failed', finish: undefined, error: 'CUDA out of memory' })).toBe('failed: CUDA out of memory');
    expect(noAudioReason({ ...base, samples: 0, frames: 0, finish: finish({ reason: 'stop', frames: 0 }) })).toBe('empty: the model ended before any audio');
    expect(noAudioReason({ ...base, samples: 0, frames: 0, finish: finish({ reason: 'cancel', frames: 0 }) })).toBe('empty: stopped before any audio');
  });
  it('says what a running take waits for', () => {
    const api = { ...base, id: 4, state: 'running', finish: undefined, frames: 12, frames_per_s: 20.25, source: 'api' };
    const mine = { ...base, id: 5, state: 'running', finish: undefined, frames: 0 };
    expect(runningState(mine, [mine, api])).toBe('waiting for take #4 (from the API) to finish');
    expect(runningState(mine, [mine, api], 1)).toBe('waiting for take #4 (from the API) to finish');
    expect(runningState(mine, [mine])).toBe('prefill: reading the script');
    // A batch of 4 has a place for it beside take 4: it prefills, it does not wait.
    expect(runningState(mine, [mine, api], 4)).toBe('prefill: reading the script');
    const full = [2, 3, 4].map((id) => ({ ...api, id }));
    expect(runningState(mine, [mine, ...full], 4)).toBe('prefill: reading the script');
    expect(runningState(mine, [mine, { ...api, id: 1 }, ...full], 4)).toBe('waiting for a place: the batch of 4 runs takes #1, #2, #3, #4');
    // Experts in host memory: a free place may still not take it (the real-time bound).
    expect(runningState(mine, [mine, api], 4, true)).toBe('reading the script, or waiting: with experts in host memory a take joins takes #4 only while each stays faster than real time');
    expect(runningState(mine, [mine], 4, true)).toBe('prefill: reading the script');
    // Finished takes hold no place.
    expect(runningState(mine, [mine, { ...api, state: 'finished' }], 1)).toBe('prefill: reading the script');
    expect(runningState(api, [mine, api])).toBe('making audio: 12 frames · 20.3 frames/s');
  });
  it('names finish reasons, durations and the memory device for people', () => {
    expect(finishReason('length')).toBe('reached max frames');
    expect(finishReason('stop')).toBe('ended by the model');
    expect(finishReason(undefined)).toBe(NONE);
    expect(formatSeconds(1.9969)).toBe('2.00 s');
    expect(formatSeconds(125.34)).toBe('2:05.3');
    expect(formatSeconds(-1)).toBe(NONE);
    expect(memoryDevice('host')).toBe("this computer's memory (RAM)");
    expect(memoryDevice('NVIDIA H200')).toBe('NVIDIA H200');
  });
});

describe('parseNumber', () => {
  it.each([
    ['0.7', 0.7],
    [' 3 ', 3],
    [12, 12],
    ['', undefined],
    ['abc', undefined],
    [null, undefined],
    [NaN, undefined],
  ])('%s → %s', (text, want) => expect(parseNumber(text as string)).toBe(want));
});

describe('statusSummary', () => {
  it('keeps a short line, shortens a long one to what it means', () => {
    expect(statusSummary('GPU backend: NVIDIA H200 (takes run on the CPU backend)')).toEqual({ short: 'GPU backend: NVIDIA H200 (takes run on the CPU backend)', more: false });
    const long = 'GPU backend unavailable: GPU worker proscenium-gpu not found (looked in $PROSCENIUM_GPU_WORKER, /usr/bin (next to this program), $PATH); build it with `make gpu-worker`; takes run on the CPU backend';
    expect(statusSummary(long)).toEqual({ short: 'GPU backend unavailable — takes run on the CPU backend', more: true });
  });
});
