import { describe, expect, it } from 'vitest';
import { levelGains, lineAt, lineMarks, lineStart, sceneKey } from './scenepreview';
import type { Project, ScenePreview } from './types';

const preview = {
  id: 3,
  project: 'Act one',
  lines: [
    { line: 1, take: 4, start_s: 0, end_s: 1.5 },
    { line: 3, take: 9, start_s: 1.9, end_s: 4 },
  ],
  skipped: [{ line: 2, why: 'no chosen take' }],
  note: 'left out: line 2 (no chosen take)',
  duration_s: 4,
  rate_hz: 44100,
} as unknown as ScenePreview;

describe('scene preview', () => {
  it('names the line playing, and the line last heard in the silence after it', () => {
    expect([0, 1.2, 1.6, 1.9, 3.99, 10].map((t) => lineAt(preview, t))).toEqual([1, 1, 1, 3, 3, 3]);
    expect(lineAt({ ...preview, lines: [{ line: 2, take: 1, start_s: 0.5, end_s: 1 }] } as ScenePreview, 0.2)).toBe(0);
  });

  it('finds where a line starts, and not a line it leaves out', () => {
    expect([lineStart(preview, 3), lineStart(preview, 2)]).toEqual([1.9, undefined]);
    expect(lineMarks(preview)).toEqual([
      { at: 0, label: '1' },
      { at: 1.9, label: '3' },
    ]);
  });

  it('changes its key with what the scene sounds like, and only then', () => {
    const p = {
      name: 'Act one',
      export: { gap_s: 0.4, target_lufs: -16, format: 'wav', per_line: false, captions: '', trim_silence: true },
      lines: [
        { text: 'a', speaker: 0, takes: [4], chosen: 4 },
        { text: 'b', speaker: 0, takes: [], chosen: 0 },
      ],
    } as unknown as Project;
    const key = sceneKey(p);
    const same = structuredClone(p);
    same.export.format = 'mp3';
    same.lines[0].text = 'a, edited';
    expect(sceneKey(same)).toBe(key);
    for (const change of [
      (q: Project) => (q.lines[1].chosen = 7),
      (q: Project) => (q.lines[0].pause_after_s = 1),
      (q: Project) => (q.lines[1].gain_db = -3),
      (q: Project) => (q.export.gap_s = 1),
      (q: Project) => (q.export.target_lufs = -20),
      (q: Project) => (q.export.trim_silence = false),
      (q: Project) => (q.name = 'Act two'),
    ]) {
      const q = structuredClone(p);
      change(q);
      expect(sceneKey(q)).not.toBe(key);
    }
  });
});

describe('level lines', () => {
  it('moves each measured line to the median, from the gain it has, within ±24 dB', () => {
    const levels = new Map([
      [1, -18],
      [2, -14.04],
      [4, -16],
      [5, -45],
    ]);
    // The median of -45, -18, -16, -14.04 is -17.
    expect(levelGains(levels, [undefined, 2, 5, -1, 0])).toEqual([1, -1, 5, -2, 24]);
  });

  it('leaves a line at the median, or one not measured, as it is', () => {
    expect(levelGains(new Map([[1, -16]]), [undefined, 3])).toEqual([undefined, 3]);
    expect(levelGains(new Map(), [2])).toEqual([2]);
  });
});
