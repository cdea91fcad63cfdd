import { describe, expect, it } from 'vitest';
import { takeDiff } from './takediff';
import type { Take } from './types';

function take(id: number, over: { temperature?: number; seed?: number; text?: string; voices?: string[] } = {}): Take {
  return {
    id,
    request: { text: over.text ?? 'Hi.', sampling: { temperature: over.temperature ?? 1, top_p: 0.9, top_k: 30 }, seed: over.seed ?? 0, max_frames: 400 },
    voices: over.voices,
  } as unknown as Take;
}

describe('takeDiff', () => {
  it('says everything about the first take', () => {
    expect(takeDiff(take(1, { voices: ['Ada'] }), undefined)).toBe('T 1 · top-p 0.9 · top-k 30 · seed 0 · Ada');
  });
  it('says only what changed', () => {
    expect(takeDiff(take(2, { temperature: 0.5, seed: 7 }), take(1))).toBe('T 0.5 · seed 7');
    expect(takeDiff(take(2), take(1))).toBe('same settings');
    expect(takeDiff(take(2, { text: 'Hello.', voices: ['Bea'] }), take(1))).toBe("text edited · Bea");
  });
});
