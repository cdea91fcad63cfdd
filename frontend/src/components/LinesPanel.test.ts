import { flushSync, mount, unmount } from 'svelte';
import { describe, expect, it } from 'vitest';
import LinesPanel from './LinesPanel.svelte';
import type { LineState } from '../lib/lines';
import type { Take } from '../lib/types';

function linesPanel(lines: LineState[], lineFiles: { base: string; format: string } | null = null, refuse = '', extra: { takes?: Take[]; sceneLine?: number; levels?: Map<number, number> } = {}) {
  const calls: [number, number | undefined][] = [];
  const played: (number | undefined)[] = [];
  const gains: [number, number | undefined][] = [];
  const named: [number, string][] = [];
  const target = document.createElement('div');
  const c = mount(LinesPanel, {
    target,
    props: {
      lines,
      sceneGap: 0.4,
      lineFiles,
      takes: [],
      cast: [],
      selected: 0,
      canSpeak: '',
      speakingAll: '',
      ...extra,
      progress: () => ({ frames: '', elapsed: '', remaining: '', rtf: '', firstAudio: '' }),
      actions: { speakLine: () => {}, speakAll: () => {}, playScene: (line?: number) => void played.push(line), levelLines: () => void played.push(-1), choose: () => {}, play: () => {}, pause: (i: number, s: number | undefined) => void calls.push([i, s]),
        gain: (i: number, db: number | undefined) => void gains.push([i, db]),
        fileName: async (i: number, name: string) => (named.push([i, name]), refuse),
      },
    },
  });
  flushSync();
  const field = (n: number, name = 'pause_after') => target.querySelector(`input[name="${name}_${n}"]`) as HTMLInputElement | null;
  const enter = (n: number, value: string, name = 'pause_after') => {
    field(n, name)!.value = value;
    field(n, name)!.dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
  };
  const fileField = (n: number) => target.querySelector(`input[name="file_name_${n}"]`) as HTMLInputElement | null;
  const name = async (n: number, value: string) => {
    fileField(n)!.value = value;
    fileField(n)!.dispatchEvent(new Event('change', { bubbles: true }));
    for (let k = 0; k < 3; k++) await Promise.resolve();
    flushSync();
  };
  return { target, calls, played, gains, named, field, enter, fileField, name, close: () => unmount(c) };
}

describe('LinesPanel: the pause after a line', () => {
  const lines: LineState[] = [
    { text: 'One.', speaker: 0, takes: [], chosen: 0, pause_after_s: 1.5 },
    { text: 'Two.', speaker: 0, takes: [], chosen: 0 },
    { text: 'Three.', speaker: 0, takes: [], chosen: 0 },
  ];

  it('shows each line\'s own pause, the scene\'s gap as a hint, and none after the last line', () => {
    const p = linesPanel(lines);
    expect(p.field(1)!.value).toBe('1.5');
    expect(p.field(2)!.value).toBe('');
    expect(p.field(2)!.placeholder).toBe('0.4');
    expect(p.field(3)).toBeNull();
    p.close();
  });

  it('sets a pause, clears it back to the scene\'s gap, and refuses what is not 0–10 s', () => {
    const p = linesPanel(lines);
    p.enter(2, '0.25');
    p.enter(1, ' ');
    expect(p.calls).toEqual([
      [1, 0.25],
      [0, undefined],
    ]);
    for (const [value, why] of [
      ['abc', 'is not a number'],
      ['12', 'at most 10 s'],
      ['-1', 'below 0'],
      ['0,5', 'use a decimal point'],
    ]) {
      p.enter(2, value);
      expect(p.target.querySelector('[data-problem="pause"]')!.textContent).toContain(why);
    }
    expect(p.calls.length).toBe(2);
    p.close();
  });
});

describe('LinesPanel: a line\'s gain in the scene', () => {
  const lines: LineState[] = [
    { text: 'One.', speaker: 0, takes: [], chosen: 0, gain_db: -3 },
    { text: 'Two.', speaker: 0, takes: [], chosen: 0 },
  ];

  it('is on every line, the last too; sets, clears, and refuses what is not within ±24 dB', () => {
    const p = linesPanel(lines);
    expect([p.field(1, 'gain')!.value, p.field(2, 'gain')!.value, p.field(2, 'gain')!.placeholder]).toEqual(['-3', '', '0']);
    p.enter(2, '+4.5', 'gain');
    p.enter(1, '', 'gain');
    expect(p.gains).toEqual([
      [1, 4.5],
      [0, undefined],
    ]);
    for (const [value, why] of [
      ['30', 'at most 24 dB'],
      ['-25', 'below -24'],
      ['loud', 'is not a number'],
    ]) {
      p.enter(2, value, 'gain');
      expect(p.target.querySelector('[data-line="2"] [data-problem="gain"]')!.textContent).toContain(why);
    }
    expect([p.gains.length, p.calls.length]).toEqual([2, 0]);
    p.close();
  });
});

describe('LinesPanel: a line\'s own file name', () => {
  const lines: LineState[] = [
    { text: 'One.', speaker: 0, takes: [], chosen: 0, file_name: 'guard_01' },
    { text: 'Two.', speaker: 0, takes: [], chosen: 0 },
  ];

  it('shows the fields only when the scene is exported a file a line, the default name as a hint', () => {
    const off = linesPanel(lines);
    expect(off.fileField(1)).toBeNull();
    off.close();
    const p = linesPanel(lines, { base: 'Act one', format: 'wav' });
    expect([p.fileField(1)!.value, p.fileField(2)!.value, p.fileField(2)!.placeholder]).toEqual(['guard_01', '', 'Act one - line 02']);
    expect(p.target.querySelector('[data-line="2"] .pause:last-child label')!.textContent).toContain('.wav');
    p.close();
  });

  it('gives the name trimmed, and shows a refusal beside the field', async () => {
    const p = linesPanel(lines, { base: 'Act one', format: 'flac' });
    await p.name(2, '  guard_02 ');
    expect(p.named).toEqual([[1, 'guard_02']]);
    expect(p.target.querySelector('[data-problem="file_name"]')).toBeNull();
    p.close();
    const r = linesPanel(lines, { base: 'Act one', format: 'flac' }, 'the file name "a:b" holds one of / \\ : * ? " < > |');
    await r.name(1, 'a:b');
    expect(r.target.querySelector('[data-line="1"] [data-problem="file_name"]')!.textContent).toContain('holds one of');
    r.close();
  });
});

describe('LinesPanel: Play scene', () => {
  const take = (id: number) => ({ id, state: 'finished', samples: 44100, request: { text: 'x', sampling: {}, seed: 0, max_frames: 0 }, finish: { audio_s: 1 } }) as unknown as Take;
  const lines: LineState[] = [
    { text: 'One.', speaker: 0, takes: [4], chosen: 4 },
    { text: 'Two.', speaker: 0, takes: [], chosen: 0 },
    { text: 'Three.', speaker: 0, takes: [9], chosen: 9 },
  ];
  const button = (p: ReturnType<typeof linesPanel>) => [...p.target.querySelectorAll('button')].find((b) => b.textContent === 'Play scene')!;

  it('plays the scene from its start, or from a line with a chosen take, and marks the line it plays', () => {
    const p = linesPanel(lines, null, '', { takes: [take(4), take(9)], sceneLine: 3, levels: new Map([[1, -17.04], [3, -15.5]]) });
    expect(button(p).disabled).toBe(false);
    button(p).click();
    expect(p.target.querySelector('[aria-label="Play the scene from line 2"]')).toBeNull();
    (p.target.querySelector('[aria-label="Play the scene from line 3"]') as HTMLButtonElement).click();
    expect(p.played).toEqual([undefined, 3]);
    expect([...p.target.querySelectorAll('li.line.playing')].map((l) => l.getAttribute('data-line'))).toEqual(['3']);
    expect([...p.target.querySelectorAll('li.line')].map((l) => l.querySelector('[data-level]')?.textContent ?? '')).toEqual(['-17.0 LUFS', '', '-15.5 LUFS']);
    [...p.target.querySelectorAll('button')].find((b) => b.textContent === 'Level lines')!.click();
    expect(p.played).toEqual([undefined, 3, -1]);
    p.close();
  });

  it('cannot play a scene without a chosen take, nor level lines without two measured', () => {
    const p = linesPanel(lines, null, '', { takes: [], levels: new Map([[1, -17]]) }); // the chosen takes are gone from the list
    expect(button(p).disabled).toBe(true);
    expect([...p.target.querySelectorAll('button')].some((b) => b.textContent === 'Level lines')).toBe(false);
    expect(p.target.querySelector('[aria-label^="Play the scene from"]')).toBeNull();
    p.close();
  });
});
