import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebAudioPlayer } from './webaudio';

// A stand-in for the browser's AudioContext: it records which chunks were
// scheduled (their first sample) and when.
const scheduled: { first: number; at: number }[] = [];
class FakeContext {
  currentTime = 0;
  state = 'running';
  destination = {};
  createGain() {
    return { gain: { value: 1 }, connect() {} };
  }
  createBuffer(_channels: number, length: number) {
    const buf = { length, first: NaN, copyToChannel: (pcm: Float32Array) => (buf.first = pcm[0]) };
    return buf;
  }
  createBufferSource() {
    const src = { buffer: null as { first: number } | null, onended: null, connect() {}, stop() {}, start: (at: number) => scheduled.push({ first: src.buffer!.first, at }) };
    return src;
  }
  resume() {}
}

afterEach(() => {
  vi.unstubAllGlobals();
  scheduled.length = 0;
});

const chunk = (take: number, k: number) => new Float32Array(4410).fill(take * 100 + k); // 0.1 s

describe('WebAudioPlayer: live takes', () => {
  it('plays one take live when several stream together, the first to start; the others only count', () => {
    vi.stubGlobal('AudioContext', FakeContext);
    const p = new WebAudioPlayer();
    p.liveChunk(1, chunk(1, 0));
    p.liveChunk(2, chunk(2, 0));
    p.liveChunk(3, chunk(3, 0));
    p.liveChunk(2, chunk(2, 1));
    p.liveChunk(1, chunk(1, 1));
    expect(scheduled.map((s) => s.first)).toEqual([100, 101]);
    expect(scheduled[1].at - scheduled[0].at).toBeCloseTo(0.1, 6); // back to back
    expect([p.current?.takeId, p.received.get(2), p.received.get(3)]).toEqual([1, 8820, 4410]);
    // Take 1 ends: take 2, already under way, is not started in the middle.
    p.liveEnd(1);
    p.liveChunk(2, chunk(2, 2));
    expect(scheduled.length).toBe(2);
    // A new take starts from its first chunk.
    p.liveChunk(4, chunk(4, 0));
    expect(scheduled.map((s) => s.first)).toEqual([100, 101, 400]);
    expect(p.current).toMatchObject({ takeId: 4, live: true });
  });

  it('a new take replaces a replay', () => {
    vi.stubGlobal('AudioContext', FakeContext);
    const p = new WebAudioPlayer();
    p.play(7, chunk(7, 0), 0);
    p.liveChunk(8, chunk(8, 0));
    expect(p.current).toMatchObject({ takeId: 8, live: true });
    expect(scheduled.map((s) => s.first)).toEqual([700, 800]);
  });
});
