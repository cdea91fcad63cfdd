import { describe, expect, it } from 'vitest';
import { randomSeed, readNumber } from './fields';

describe('readNumber', () => {
  it.each([
    ['0.7', false, 0.7],
    [' 12 ', true, 12],
    ['.5', false, 0.5],
    ['1e2', true, 100],
    ['-3', true, -3],
    [0.25, false, 0.25],
  ])('%s reads as a number', (text, integer, want) => {
    expect(readNumber(text, integer)).toEqual({ ok: true, value: want });
  });
  it.each([
    ['abc', false, '"abc" is not a number'],
    ['0,7', false, 'use a decimal point: 0.7'],
    ['', false, 'enter a number'],
    [null, false, 'enter a number'],
    ['1.5', true, 'a whole number'],
    ['7 frames', true, '"7 frames" is not a number'],
    ['0x10', true, '"0x10" is not a number'],
    ['1e400', false, '1e400 is too large'],
    ['9007199254740993', true, 'at most 9007199254740991'],
  ])('%s is refused, never read as 0', (text, integer, reason) => {
    expect(readNumber(text, integer)).toEqual({ ok: false, reason });
  });
});

describe('randomSeed', () => {
  it('covers the seed range and stays inside it', () => {
    expect(randomSeed(() => 0)).toBe(0);
    const top = randomSeed(() => 0.9999999999);
    expect(top).toBeLessThan(2 ** 53);
    expect(top).toBeGreaterThan(2 ** 52);
    expect(Number.isSafeInteger(top)).toBe(true);
  });
});

describe('readNumber with a minimum', () => {
  it('refuses a seed of -1 in our words', () => {
    expect(readNumber('-1', true, 0)).toEqual({ ok: false, reason: '-1 is below 0: use 0 or more' });
    expect(readNumber('0', true, 0)).toEqual({ ok: true, value: 0 });
  });
});
