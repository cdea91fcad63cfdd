// A take row says only what differs from the take before it ("T 0.5 ·
// seed 7"): the takes of one line are mostly the same settings, and the
// change is what the listener compares.
import type { Take } from './types';

interface Fields {
  T: number;
  'top-p': number;
  'top-k': number;
  seed: number;
  max: number;
  voice: string;
}

function fields(t: Take): Fields {
  const s = t.request.sampling;
  return { T: s.temperature, 'top-p': s.top_p, 'top-k': s.top_k, seed: t.request.seed, max: t.request.max_frames, voice: (t.voices ?? []).join(' + ') || "model's voice" };
}

function show(k: keyof Fields, v: number | string): string {
  return k === 'voice' ? String(v) : k === 'max' ? `max ${v} frames` : `${k} ${v}`;
}

/** Everything about the first take; what changed for a later one. */
export function takeDiff(t: Take, previous: Take | undefined): string {
  const now = fields(t);
  const keys = Object.keys(now) as (keyof Fields)[];
  if (!previous) return keys.filter((k) => k !== 'max').map((k) => show(k, now[k])).join(' · ');
  const before = fields(previous);
  const changed = keys.filter((k) => now[k] !== before[k]).map((k) => show(k, now[k]));
  if (t.request.text !== previous.request.text) changed.unshift('text edited');
  return changed.length ? changed.join(' · ') : 'same settings';
}
