// How the readouts and the takes list print the service's figures. A figure
// the service did not report prints as "—", never as a number.
import type { Finish, Memory, Take } from './types';

export const NONE = '—';

const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** Bytes in binary units with three significant digits: 1536 → "1.50 KiB". */
export function formatBytes(n: number | undefined | null): string {
  if (n == null || !Number.isFinite(n) || n < 0) return NONE;
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  if (i === 0) return `${n} B`;
  return `${v.toPrecision(3)} ${units[i]}`;
}

export interface MemoryReadout {
  used: string;
  peak: string;
  cap: string;
  device: string;
}

export function memoryReadout(m: Memory | undefined | null): MemoryReadout {
  if (!m) return { used: NONE, peak: NONE, cap: NONE, device: NONE };
  return {
    used: formatBytes(m.used),
    peak: formatBytes(m.peak),
    cap: m.cap > 0 ? formatBytes(m.cap) : 'no cap',
    device: m.device || NONE,
  };
}

/** Go time.Duration (nanoseconds) as milliseconds: 73_400_000 → "73.4 ms". */
export function formatDurationNs(ns: number | undefined | null): string {
  if (ns == null || !Number.isFinite(ns) || ns < 0) return NONE;
  const ms = ns / 1e6;
  if (ms < 1000) return `${ms.toPrecision(3)} ms`;
  return `${(ms / 1000).toPrecision(3)} s`;
}

/** Real-time factor: processing time ÷ audio duration (below 1 is faster than real time). */
export function formatRTF(f: Finish | undefined | null): string {
  if (!f || !(f.audio_seconds > 0) || !Number.isFinite(f.real_time_factor)) return NONE;
  return f.real_time_factor.toFixed(3);
}

export function formatTTFA(f: Finish | undefined | null): string {
  if (!f || !(f.frames > 0)) return NONE;
  return formatDurationNs(f.time_to_first_audio);
}

/** One line describing a take for the takes list. */
export function describeTake(t: Take): string {
  const s = t.request.sampling;
  const settings = `T ${s.temperature} · top-p ${s.top_p} · top-k ${s.top_k} · seed ${t.request.seed}`;
  switch (t.state) {
    case 'running':
      return `running: ${t.frames} frames · ${settings}`;
    case 'finished': {
      const f = t.finish;
      const audio = f ? `${f.audio_seconds.toFixed(2)} s, ${f.frames} frames, ${f.reason}` : 'finished';
      return `${audio} · RTF ${formatRTF(f)} · ${settings}`;
    }
    default:
      return `failed: ${t.error} · ${settings}`;
  }
}

/** Parses a number field; undefined when the text is not a finite number. */
export function parseNumber(text: string | number | null | undefined): number | undefined {
  if (text == null) return undefined;
  if (typeof text === 'number') return Number.isFinite(text) ? text : undefined;
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}
