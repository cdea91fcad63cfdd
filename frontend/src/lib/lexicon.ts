// Pronunciation files: what an import merges into the lexicon the settings keep (mergeLexicon), and what an export writes (lexiconFile).
import type { LexiconEntry } from './types';

/** The largest file the service reads as pronunciations (Go's lexicon.MaxFileBytes). */
export const maxLexiconFileBytes = 512 << 10;

/**
 * The lexicon with `incoming` merged in: a written form already there takes
 * the file's spoken form in place, a new one is added at the end, in the
 * file's order.
 */
export function mergeLexicon(current: LexiconEntry[], incoming: LexiconEntry[]): { next: LexiconEntry[]; added: number; changed: number } {
  const next = current.map((e) => ({ ...e }));
  const at = new Map(next.map((e, i) => [e.written, i]));
  let added = 0;
  let changed = 0;
  for (const e of incoming) {
    const i = at.get(e.written);
    if (i === undefined) {
      at.set(e.written, next.length);
      next.push({ written: e.written, spoken: e.spoken });
      added++;
    } else if (next[i].spoken !== e.spoken) {
      next[i].spoken = e.spoken;
      changed++;
    }
  }
  return { next, added, changed };
}

/** A lexicon file in the shape Go's lexicon.Marshal writes: a JSON array, one pronunciation to a line. */
export function lexiconFile(entries: LexiconEntry[]): string {
  if (!entries.length) return '[]\n';
  return `[\n${entries.map((e) => `  ${JSON.stringify({ written: e.written, spoken: e.spoken })}`).join(',\n')}\n]\n`;
}
