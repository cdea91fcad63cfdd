// Play scene: the studio hears a project's scene before it is exported,
// from a preview the service assembles (Service.PreviewScene: the chosen
// takes at the export's gain). A preview is remade only when what it was
// made from changed; these helpers say when, and where its lines sit.
import type { Project, ScenePreview } from './types';

/**
 * What a scene preview is made of in a project: each line's chosen take,
 * pause after it and gain, the scene's gap, loudness target and trimming. Two projects with the
 * same key sound the same as a scene.
 */
export function sceneKey(p: Project): string {
  return JSON.stringify([p.name, p.export.gap_s, p.export.target_lufs, p.export.trim_silence, p.lines.map((l) => [l.chosen, l.pause_after_s ?? null, l.gain_db ?? null])]);
}

/** The number (from 1) of the line playing at `seconds`, or of the line last heard during the silence after it; 0 before the first. */
export function lineAt(pv: ScenePreview, seconds: number): number {
  let at = 0;
  for (const l of pv.lines) {
    if (l.start_s > seconds) break;
    at = l.line;
  }
  return at;
}

/** Where line `line` (from 1) starts in the preview, in seconds; undefined when the preview leaves it out. */
export function lineStart(pv: ScenePreview, line: number): number | undefined {
  return pv.lines.find((l) => l.line === line)?.start_s;
}

/** The preview's line starts as waveform marks labelled with the line's number. */
export function lineMarks(pv: ScenePreview): { at: number; label: string }[] {
  return pv.lines.map((l) => ({ at: l.start_s, label: String(l.line) }));
}

/**
 * Level lines: each measured line's gain moved by its distance from the
 * lines' median loudness, so that played again they measure alike (within
 * ±24 dB, to 0.1 dB). levels: line (from 1) → LUFS as played; gains: each
 * line's gain now (index = line - 1). Lines not measured keep theirs.
 */
export function levelGains(levels: Map<number, number>, gains: (number | undefined)[]): (number | undefined)[] {
  const sorted = [...levels.values()].sort((a, b) => a - b);
  if (!sorted.length) return gains;
  const m = sorted.length;
  const median = m % 2 ? sorted[(m - 1) / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
  return gains.map((g, i) => {
    const l = levels.get(i + 1);
    if (l === undefined) return g;
    const next = Math.round(Math.min(24, Math.max(-24, (g ?? 0) + median - l)) * 10) / 10;
    return next === 0 ? undefined : next;
  });
}
