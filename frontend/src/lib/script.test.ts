import { describe, expect, it } from 'vitest';
import { highlight, markFound, markRanges } from './script';

describe('highlight', () => {
  it('marks directions, paired tags and speakers', () => {
    expect(highlight('<|speaker:1|>[softly] I <whisper>know</whisper>.')).toEqual([
      { kind: 'speaker', text: '<|speaker:1|>' },
      { kind: 'direction', text: '[softly]' },
      { kind: 'text', text: ' I ' },
      { kind: 'tag', text: '<whisper>' },
      { kind: 'text', text: 'know' },
      { kind: 'tag', text: '</whisper>' },
      { kind: 'text', text: '.' },
    ]);
  });
  it('a tag without its partner is unpaired', () => {
    expect(highlight('<laugh> and <shout>no</whisper>').map((s) => s.kind)).toEqual(['unpaired', 'text', 'unpaired', 'text', 'unpaired']);
  });
  it('plain text and an unclosed bracket stay text', () => {
    expect(highlight('Hello [there')).toEqual([{ kind: 'text', text: 'Hello [there' }]);
  });
});

describe('markRanges', () => {
  it('marks refused ranges across spans and keeps the text whole', () => {
    const text = '🎭 Say <|im_end|> now <whisper>x</whisper>';
    const start = text.indexOf('<|im_end|>');
    const spans = markRanges(highlight(text), [{ start, end: start + 10 }]);
    expect(spans.map((s) => s.text).join('')).toBe(text);
    expect(spans.filter((s) => s.kind === 'refused').map((s) => s.text)).toEqual(['<|im_end|>']);
    expect(spans.filter((s) => s.kind === 'tag').length).toBe(2);
  });
  it('leaves spans alone without ranges, and ignores whole-script problems', () => {
    const spans = highlight('a [b] c');
    expect(markRanges(spans, [])).toBe(spans);
    expect(markRanges(spans, [{ start: -1, end: -1 }])).toBe(spans);
  });
});

describe('markFound', () => {
  it('marks the matches across spans, the current one apart, keeping each piece\'s kind', () => {
    const text = 'Bea [to Bea] Bea';
    const spans = markFound(highlight(text), [
      { start: 0, end: 3 },
      { start: 8, end: 11 },
      { start: 13, end: 16 },
    ], 1);
    expect(spans.map((s) => s.text).join('')).toBe(text);
    expect(spans.filter((s) => s.found).map((s) => [s.text, s.kind, s.found])).toEqual([
      ['Bea', 'text', 'match'],
      ['Bea', 'direction', 'current'],
      ['Bea', 'text', 'match'],
    ]);
  });
});
