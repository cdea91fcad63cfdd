import { describe, expect, it } from 'vitest';
import { lineRequest, relink, speakersOf, splitLines } from './lines';
import sharedCases from '../../../app/script/testdata/lines.json';

// The cases app/script's Lines is checked against too: the studio's two splitters agree.
const shared = sharedCases as { name: string; script: string; lines: { speaker: number; text: string }[] }[];
describe('splitLines and app/script Lines: the shared cases', () => {
  for (const c of shared) {
    it(c.name, () => {
      expect(splitLines(c.script).map(({ speaker, text }) => ({ speaker, text }))).toEqual(c.lines);
    });
  }
});

describe('splitLines', () => {
  it('starts a line at a blank line and at each speaker tag', () => {
    const s = '<|speaker:0|>Hello there.\n<|speaker:1|>Hi! How are you?\n\nA new paragraph, same speaker.\n\n\n<|speaker:0|>Fine.';
    expect(splitLines(s)).toEqual([
      { text: '<|speaker:0|>Hello there.', speaker: 0, tagged: true },
      { text: '<|speaker:1|>Hi! How are you?', speaker: 1, tagged: true },
      { text: 'A new paragraph, same speaker.', speaker: 1, tagged: false },
      { text: '<|speaker:0|>Fine.', speaker: 0, tagged: true },
    ]);
  });
  it('keeps a paragraph without tags whole and drops empty lines', () => {
    expect(splitLines('One.\nStill one.\n  \n\nTwo.')).toEqual([
      { text: 'One.\nStill one.', speaker: 0, tagged: false },
      { text: 'Two.', speaker: 0, tagged: false },
    ]);
    expect(splitLines('')).toEqual([]);
    expect(splitLines('<|speaker:2|>\n\nSays this.')).toEqual([{ text: 'Says this.', speaker: 2, tagged: false }]);
  });
  it('cuts mid-paragraph tags', () => {
    expect(splitLines('Intro. <|speaker:1|>Reply.').map((l) => [l.text, l.speaker])).toEqual([
      ['Intro.', 0],
      ['<|speaker:1|>Reply.', 1],
    ]);
  });
});

describe('relink', () => {
  const old = [
    { text: 'A', speaker: 0, takes: [1, 2], chosen: 2 },
    { text: 'B', speaker: 1, takes: [3], chosen: 0 },
    { text: 'C', speaker: 0, takes: [4], chosen: 4 },
  ];
  it('follows moved lines by their text', () => {
    const got = relink(old, splitLines('C\n\nA'));
    expect(got.map((l) => [l.text, l.takes, l.chosen])).toEqual([
      ['C', [4], 4],
      ['A', [1, 2], 2],
    ]);
  });
  it('keeps the takes of a line edited in place', () => {
    const got = relink(old, splitLines('A\n\nB, edited\n\nC'));
    expect(got[1]).toEqual({ text: 'B, edited', speaker: 0, takes: [3], chosen: 0 });
  });
  it('reads a saved line whose takes are null (JSON of a Go nil slice) as none', () => {
    const saved = [{ text: 'A', speaker: 0, takes: null as unknown as number[], chosen: 0 }];
    expect(relink(saved, splitLines('A'))).toEqual([{ text: 'A', speaker: 0, takes: [], chosen: 0 }]);
  });
  it('gives a new line no takes', () => {
    const got = relink(old, splitLines('A\n\nNew\n\nB\n\nC'));
    expect(got.map((l) => l.takes)).toEqual([[1, 2], [], [3], [4]]);
  });
  it('keeps a line\'s own pause and gain with it, and gives a new line neither', () => {
    const paused = old.map((l, i) => (i === 0 ? { ...l, pause_after_s: 1.5, gain_db: -2 } : l));
    const got = relink(paused, splitLines('New\n\nB\n\nA'));
    expect(got.map((l) => [l.pause_after_s, l.gain_db])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
      [1.5, -2],
    ]);
    expect('pause_after_s' in got[0] || 'gain_db' in got[0]).toBe(false);
  });
  it('keeps a line\'s own file name with it, and gives a new line none', () => {
    const named = old.map((l, i) => (i === 1 ? { ...l, file_name: 'b_01' } : l));
    const got = relink(named, splitLines('B\n\nNew\n\nA'));
    expect(got.map((l) => l.file_name)).toEqual(['b_01', undefined, undefined]);
    expect('file_name' in got[1]).toBe(false);
  });
});

describe('lineRequest', () => {
  const line = { text: '<|speaker:1|>Hi.', speaker: 1, tagged: true };
  it('speaks a cast speaker alone in its voice', () => {
    expect(lineRequest(line, ['', 'Bea'])).toEqual({ text: 'Hi.', cast: ['Bea'] });
  });
  it('keeps the tag of a speaker in the model voice', () => {
    expect(lineRequest(line, ['Ada'])).toEqual({ text: '<|speaker:1|>Hi.', cast: [] });
    expect(lineRequest({ text: 'Plain.', speaker: 0, tagged: false }, [])).toEqual({ text: 'Plain.', cast: [] });
  });
  it('lists speakers', () => {
    expect(speakersOf(splitLines('<|speaker:1|>a\n\n<|speaker:0|>b\n\nc'))).toEqual([0, 1]);
  });
});
