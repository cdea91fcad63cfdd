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
  const rs = ranges.filter((r) => r.start >= 0 && r.end > r.start).sort((a, b) => a.start - b.start);
  if (rs.length === 0) return spans;
  const out: MarkedSpan[] = [];
  let at = 0;
  for (const s of spans) {
    let from = 0;
    const end = at + s.text.length;
    // Cut points inside this span.
    const cuts = new Set<number>();
    for (const r of rs) {
      if (r.start > at && r.start < end) cuts.add(r.start - at);
      if (r.end > at && r.end < end) cuts.add(r.end - at);
    }
    for (const c of [...cuts].sort((a, b) => a - b).concat(s.text.length)) {
      const piece = s.text.slice(from, c);
      const mid = at + from;
      const bad = rs.some((r) => mid >= r.start && mid < r.end);
      if (piece) out.push(bad ? { kind: 'refused', text: piece } : { kind: s.kind, text: piece });
      from = c;
    }
    at = end;
  }
  return out;
}

export type MarkedSpan = Span | { kind: 'refused'; text: string };
