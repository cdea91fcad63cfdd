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
    used: formatBytes(m.used_bytes),
    peak: formatBytes(m.peak_bytes),
    cap: m.cap_bytes > 0 ? formatBytes(m.cap_bytes) : 'no cap',
    device: m.device || NONE,
  };
}

/** Milliseconds: 73.4 → "73.4 ms", 2500 → "2.50 s". */
export function formatMs(ms: number | undefined | null): string {
  if (ms == null || !Number.isFinite(ms) || ms < 0) return NONE;
  if (ms < 1000) return `${ms.toPrecision(3)} ms`;
  return `${(ms / 1000).toPrecision(3)} s`;
}

/** Real-time factor: processing time ÷ audio duration (below 1 is faster than real time). */
export function formatRTF(f: Finish | undefined | null): string {
  if (!f || !(f.audio_s > 0) || !Number.isFinite(f.real_time_factor)) return NONE;
  return f.real_time_factor.toFixed(3);
}

export function formatTTFA(f: Finish | undefined | null): string {
  if (!f || !(f.frames > 0)) return NONE;
  return formatMs(f.time_to_first_audio_ms);
}

/** Parses a number field; undefined when the text is not a finite number. */
export function parseNumber(text: string | number | null | undefined): number | undefined {
  if (text == null) return undefined;
  if (typeof text === 'number') return Number.isFinite(text) ? text : undefined;
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** Seconds as "1.25 s" or "2:05.3" past a minute. */
export function formatSeconds(s: number | undefined | null): string {
  if (s == null || !Number.isFinite(s) || s < 0) return NONE;
  if (s < 60) return `${s.toFixed(2)} s`;
  const m = Math.floor(s / 60);
  return `${m}:${(s - 60 * m).toFixed(1).padStart(4, '0')}`;
}

/** The memory the engine reports, named for people ("host" is the computer's RAM). */
export function memoryDevice(device: string | undefined | null): string {
  if (!device) return NONE;
  if (device === 'host') return "this computer's memory (RAM)";
  return device;
}

const reasons: Record<string, string> = {
  stop: 'ended by the model',
  length: 'reached max frames',
  cancel: 'stopped',
};

/** Why a finished take ended, in words. */
export function finishReason(reason: string | undefined | null): string {
  return reason ? (reasons[reason] ?? reason) : NONE;
}

/**
 * What a running take is doing: waiting for a place (the takes ahead of it
 * fill the engine's batch places; batch 1: one take at a time), reading its
 * prompt (prefill, before the first frame), or making frames. The engine
 * admits takes in order, so a take waits only while batch earlier takes
 * still run — or, where the GPU keeps experts in host memory (hostTier),
 * while one more take would make each slower than real time: then which of
 * the two it is doing cannot be told from here, and the line says so.
 */
export function runningState(t: Take, takes: Take[], batch = 1, hostTier = false): string {
  if (t.frames > 0) {
    const fps = t.frames_per_s > 0 ? ` · ${t.frames_per_s.toFixed(1)} frames/s` : '';
    return `making audio: ${t.frames} frames${fps}`;
  }
  const places = Math.max(1, batch);
  const ahead = takes.filter((o) => o.state === 'running' && o.id < t.id).sort((a, b) => a.id - b.id);
  if (ahead.length >= places) {
    if (places === 1) return `waiting for take #${ahead[0].id}${ahead[0].source === 'api' ? ' (from the API)' : ''} to finish`;
    return `waiting for a place: the batch of ${places} runs takes ${ahead.slice(0, places).map((o) => `#${o.id}`).join(', ')}`;
  }
  if (hostTier && ahead.length > 0) {
    return `reading the script, or waiting: with experts in host memory a take joins takes ${ahead.map((o) => `#${o.id}`).join(', ')} only while each stays faster than real time`;
  }
  return 'prefill: reading the script';
}

/** Why a take has no audio to play or export, or "" when it has. */
export function noAudioReason(t: Take): string {
  if (t.state === 'failed') return `failed: ${t.error || 'no reason given'}`;
  if (t.state === 'finished' && !(t.samples > 0)) {
    return t.finish?.reason === 'cancel' ? 'empty: stopped before any audio' : 'empty: the model ended before any audio';
  }
  return '';
}

/**
 * A long status line (the GPU backend's, with paths and driver errors) as
 * its first clause plus what it means for takes; the rest is a detail.
 */
export function statusSummary(text: string): { short: string; more: boolean } {
  const colon = text.indexOf(': ');
  if (text.length <= 90 || colon < 0) return { short: text, more: false };
  const cpu = /takes run on the CPU backend/.test(text) ? ' — takes run on the CPU backend' : '';
  return { short: text.slice(0, colon) + cpu, more: true };
}
