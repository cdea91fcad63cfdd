import { flushSync, mount, unmount } from 'svelte';
import { describe, expect, it } from 'vitest';
import LinesPanel from './LinesPanel.svelte';
import type { LineState } from '../lib/lines';

function linesPanel(lines: LineState[]) {
  const calls: [number, number | undefined][] = [];
  const target = document.createElement('div');
  const c = mount(LinesPanel, {
    target,
    props: {
      lines,
      sceneGap: 0.4,
      takes: [],
      cast: [],
      selected: 0,
      canSpeak: '',
      speakingAll: '',
      progress: () => ({ frames: '', elapsed: '', remaining: '', rtf: '', firstAudio: '' }),
      actions: { speakLine: () => {}, speakAll: () => {}, choose: () => {}, play: () => {}, pause: (i: number, s: number | undefined) => void calls.push([i, s]) },
    },
  });
  flushSync();
  const field = (n: number) => target.querySelector(`input[name="pause_after_${n}"]`) as HTMLInputElement | null;
  const enter = (n: number, value: string) => {
    field(n)!.value = value;
    field(n)!.dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
  };
  return { target, calls, field, enter, close: () => unmount(c) };
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
