// Script markup for the editor's highlighting: [directions], paired word
// tags like <whisper>…</whisper>, and speaker tokens <|speaker:N|>.

export type SpanKind = 'text' | 'direction' | 'tag' | 'speaker' | 'unpaired';

export interface Span {
  kind: SpanKind;
  text: string;
}

const token = /\[[^\[\]\n]*\]|<\|speaker:\d+\|>|<\/?[A-Za-z][\w-]*>/g;

/** Splits a script into spans; a word tag without its partner is 'unpaired'. */
export function highlight(script: string): Span[] {
  const raw: Span[] = [];
  let last = 0;
  for (const m of script.matchAll(token)) {
    const i = m.index ?? 0;
    if (i > last) raw.push({ kind: 'text', text: script.slice(last, i) });
    const t = m[0];
    raw.push({ kind: t.startsWith('[') ? 'direction' : t.startsWith('<|') ? 'speaker' : 'tag', text: t });
    last = i + t.length;
  }
  if (last < script.length) raw.push({ kind: 'text', text: script.slice(last) });
  // Pair opening and closing tags by name, innermost first.
  const open: { name: string; at: number }[] = [];
  const paired = new Set<number>();
  raw.forEach((s, at) => {
    if (s.kind !== 'tag') return;
    const close = s.text.startsWith('</');
    const name = s.text.replace(/[<>/]/g, '');
    if (!close) open.push({ name, at });
    else {
      const j = open.map((o) => o.name).lastIndexOf(name);
      if (j >= 0) {
        paired.add(open[j].at).add(at);
        open.splice(j, 1);
      }
    }
  });
  return raw.map((s, at) => (s.kind === 'tag' && !paired.has(at) ? { ...s, kind: 'unpaired' } : s));
}

/**
 * Marks [start, end) ranges (UTF-16 offsets, as the service reports
 * refusals) as 'refused' spans, splitting the spans they cross.
 */
export function markRanges(spans: Span[], ranges: { start: number; end: number }[]): MarkedSpan[] {
  return splitMarked<MarkedSpan>(spans, ranges, (s) => ({ kind: 'refused', text: s.text }));
}

/** Marks the find bar's matches (found: 'match', or 'current' for match number current), keeping each piece's kind. */
export function markFound(spans: MarkedSpan[], ranges: { start: number; end: number }[], current: number): MarkedSpan[] {
  return splitMarked(spans, ranges, (s, r) => ({ ...s, found: r === current ? 'current' : 'match' }));
}

/**
 * Splits spans where ranges begin and end, and passes each piece inside a
 * range, with the range's number, through mark. One pass over both (a
 * common letter can match thousands of times in a long script).
 */
function splitMarked<T extends { text: string }>(spans: T[], ranges: { start: number; end: number }[], mark: (s: T, range: number) => T): T[] {
  const rs = ranges.map((r, i) => ({ ...r, i })).filter((r) => r.start >= 0 && r.end > r.start).sort((a, b) => a.start - b.start);
  if (rs.length === 0) return spans;
  const out: T[] = [];
  let at = 0; // where span s begins in the script
  let k = 0; // the first range that ends after pos
  for (const s of spans) {
    const end = at + s.text.length;
    for (let pos = at; pos < end; ) {
      while (k < rs.length && rs[k].end <= pos) k++;
      const r = rs[k];
      const inside = !!r && r.start <= pos;
      const to = Math.min(end, inside ? r.end : (r?.start ?? end));
      const piece = { ...s, text: s.text.slice(pos - at, to - at) };
      out.push(inside ? mark(piece, r.i) : piece);
      pos = to;
    }
    at = end;
  }
  return out;
}

/** A span of the editor's overlay: its markup kind (or refused), and whether the find bar found it. */
export type MarkedSpan = (Span | { kind: 'refused'; text: string }) & { found?: 'match' | 'current' };
