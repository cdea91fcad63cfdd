import { describe, expect, it } from 'vitest';
import { shrinkPeaks } from './peaks';

describe('shrinkPeaks', () => {
  it('keeps every extreme when it halves the buckets', () => {
    expect(shrinkPeaks([-0.1, 0.2, -0.5, 0.1, -0.2, 0.9, -0.3, 0.3], 2)).toEqual([-0.5, 0.2, -0.3, 0.9]);
  });
  it('leaves peaks that already fit', () => {
    const v = [-1, 1, 0, 0];
    expect(shrinkPeaks(v, 120)).toBe(v);
  });
  it('covers all buckets when they do not divide evenly', () => {
    const v = Array.from({ length: 7 }, (_, i) => [-i, i]).flat();
    expect(shrinkPeaks(v, 3)).toEqual([-1, 1, -3, 3, -6, 6]);
  });
});
