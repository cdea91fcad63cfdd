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
