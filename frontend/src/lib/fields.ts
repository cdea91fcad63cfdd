// What a number field holds, read strictly: the text the user sees is the
// value Speak uses, or a reason it cannot be used. Nothing is guessed ("abc"
// is not 0, "0,7" is not 0 or 7).

export type FieldValue = { ok: true; value: number } | { ok: false; reason: string };

const decimal = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** Parses a number field; integer fields refuse fractions; min (when given) is the smallest value allowed. */
export function readNumber(text: string | number | null | undefined, integer = false, min?: number): FieldValue {
  if (typeof text === 'number') text = String(text);
  const t = (text ?? '').trim();
  if (t === '') return { ok: false, reason: 'enter a number' };
  if (/^[+-]?\d*,\d+$/.test(t)) return { ok: false, reason: `use a decimal point: ${t.replace(',', '.')}` };
  if (!decimal.test(t)) return { ok: false, reason: `"${t}" is not a number` };
  const n = Number(t);
  if (!Number.isFinite(n)) return { ok: false, reason: `${t} is too large` };
  if (integer && !Number.isInteger(n)) return { ok: false, reason: 'a whole number' };
  if (integer && !Number.isSafeInteger(n)) return { ok: false, reason: `at most ${Number.MAX_SAFE_INTEGER}` };
  if (min !== undefined && n < min) return { ok: false, reason: `${t} is below ${min}: use ${min} or more` };
  return { ok: true, value: n };
}

/** A random seed the service accepts: [0, 2^53). */
export function randomSeed(rand: () => number = Math.random): number {
  return Math.floor(rand() * 2 ** 32) * 2 ** 21 + Math.floor(rand() * 2 ** 21);
}
