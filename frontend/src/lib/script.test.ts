import { describe, expect, it } from 'vitest';
import { highlight } from './script';

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
