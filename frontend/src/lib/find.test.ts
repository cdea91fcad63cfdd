import { describe, expect, it } from 'vitest';
import { findAll, matchFrom, replaceAll } from './find';

const plain = { matchCase: false, wholeWords: false };

describe('find in the script', () => {
  it('finds a literal text in any case, in order, not overlapping', () => {
    expect(findAll('Ann met ann. ANNA', 'ann', plain)).toEqual([
      { start: 0, end: 3 },
      { start: 8, end: 11 },
      { start: 13, end: 16 },
    ]);
    expect(findAll('aaaa', 'aa', plain)).toEqual([
      { start: 0, end: 2 },
      { start: 2, end: 4 },
    ]);
    expect(findAll('text', '', plain)).toEqual([]);
  });

  it('takes the query as typed, never as a pattern', () => {
    const s = 'a.b a*b [laughs] (x) $1 \\n a/b';
    for (const q of ['a.b', 'a*b', '[laughs]', '(x)', '$1', '\\n', 'a/b']) expect(findAll(s, q, plain).map((r) => s.slice(r.start, r.end))).toEqual([q]);
    expect(findAll('axb', 'a.b', plain)).toEqual([]);
  });

  it('matches the case and whole words when asked, in any script', () => {
    expect(findAll('Ann ann', 'Ann', { matchCase: true, wholeWords: false })).toEqual([{ start: 0, end: 3 }]);
    const words = { matchCase: false, wholeWords: true };
    expect(findAll('Anna, Ann; ann_x Ann2 Ann', 'ann', words)).toEqual([
      { start: 6, end: 9 },
      { start: 22, end: 25 },
    ]);
    expect(findAll('Éloïse et élo', 'élo', words)).toEqual([{ start: 10, end: 13 }]);
    expect(findAll('<|speaker:1|>Hi', '<|speaker:1|>', words)).toEqual([{ start: 0, end: 13 }]);
  });

  it('counts UTF-16 offsets, as the editor selects', () => {
    const s = '🎭 Bea: hi Bea';
    expect(findAll(s, 'Bea', plain).map((r) => r.start)).toEqual([3, 11]);
  });

  it('replaces every match with the text as typed, and says how many', () => {
    expect(replaceAll('Ann met ann. Anna', 'ann', 'Bea', { matchCase: false, wholeWords: true })).toEqual({ text: 'Bea met Bea. Anna', count: 2 });
    expect(replaceAll('a b a', 'a', '$&$1', plain)).toEqual({ text: '$&$1 b $&$1', count: 2 });
    expect(replaceAll('abc', 'x', 'y', plain)).toEqual({ text: 'abc', count: 0 });
    expect(replaceAll('abc', '', 'y', plain)).toEqual({ text: 'abc', count: 0 });
  });

  it('goes to the first match at or after the caret, wrapping to the first', () => {
    const m = findAll('x . x . x', 'x', plain);
    expect([0, 1, 4, 5, 9].map((c) => matchFrom(m, c))).toEqual([0, 1, 1, 2, 0]);
    expect(matchFrom([], 3)).toBe(-1);
  });
});
