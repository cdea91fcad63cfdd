import { describe, expect, it } from 'vitest';
import { base64ToBytes, bytesToBase64, encodeWav16 } from './recorder';

describe('recorder', () => {
  it('writes a 16-bit mono WAV the Go reader parses: header fields and clipped samples', () => {
    const wav = encodeWav16(new Float32Array([0, 0.5, -1, 2]), 48000);
    const v = new DataView(wav.buffer);
    const text = (o: number, n: number) => String.fromCharCode(...wav.subarray(o, o + n));
    expect(wav.length).toBe(44 + 8);
    expect(text(0, 4)).toBe('RIFF');
    expect(v.getUint32(4, true)).toBe(wav.length - 8);
    expect(text(8, 8)).toBe('WAVEfmt ');
    expect([v.getUint16(20, true), v.getUint16(22, true), v.getUint32(24, true), v.getUint16(34, true)]).toEqual([1, 1, 48000, 16]);
    expect(v.getUint32(40, true)).toBe(8);
    expect([0, 1, 2, 3].map((i) => v.getInt16(44 + 2 * i, true))).toEqual([0, 16384, -32767, 32767]);
  });

  it('round-trips bytes through base64, in chunks larger than one call', () => {
    const b = new Uint8Array(70000).map((_, i) => (i * 7) % 256);
    const s = bytesToBase64(b);
    expect(s.slice(0, 8)).toBe(btoa(String.fromCharCode(0, 7, 14, 21, 28, 35)).slice(0, 8));
    expect(base64ToBytes(s)).toEqual(b);
  });
});
