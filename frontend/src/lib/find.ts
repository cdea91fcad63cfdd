// Find and replace in the script (the editor's find bar, Ctrl+F): every
// match of a literal text, in order and not overlapping, as UTF-16 ranges
// of the script (the editor's selection and the highlighting use them).

export interface FindOptions {
  /** "Ann" does not find "ann". */
  matchCase: boolean;
  /** Whole words only: "Ann" is not in "Anna" (letters, digits and _ make words). */
  wholeWords: boolean;
}

export interface Range {
  start: number;
  end: number;
}

/** The pattern of query under opt: the text itself, never a regular expression. */
function pattern(query: string, opt: FindOptions): RegExp {
  const literal = query.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  // A whole word has no word character beside it, on each side where the
  // query itself begins or ends with one ("<|speaker:1|>" is whole anywhere).
  const word = /[\p{L}\p{N}_]/u;
  const before = opt.wholeWords && word.test(query.at(0)!) ? '(?<![\\p{L}\\p{N}_])' : '';
  const after = opt.wholeWords && word.test(query.at(-1)!) ? '(?![\\p{L}\\p{N}_])' : '';
  const body = before + literal + after;
  return new RegExp(body, opt.matchCase ? 'gu' : 'giu');
}

/** Every match of query in text, in order; none for an empty query. */
export function findAll(text: string, query: string, opt: FindOptions): Range[] {
  if (!query) return [];
  return [...text.matchAll(pattern(query, opt))].map((m) => ({ start: m.index, end: m.index + m[0].length }));
}

/** The text with every match replaced by replacement (as typed: "$1" is "$1"), and how many there were. */
export function replaceAll(text: string, query: string, replacement: string, opt: FindOptions): { text: string; count: number } {
  if (!query) return { text, count: 0 };
  let count = 0;
  const out = text.replace(pattern(query, opt), () => (count++, replacement));
  return { text: out, count };
}

/** The match to go to from the caret: the first that starts at or after it, else the first (the search wraps). */
export function matchFrom(matches: Range[], caret: number): number {
  if (!matches.length) return -1;
  const i = matches.findIndex((m) => m.start >= caret);
  return i >= 0 ? i : 0;
}
