// Waveform peaks (min, max pairs per bucket, as the service sends them)
// reduced to a width: the takes list keeps only what its rows draw.

/** At most `width` min/max pairs covering all of `values`. */
export function shrinkPeaks(values: number[], width: number): number[] {
  const n = values.length / 2;
  if (n <= width) return values;
  const out = new Array<number>(2 * width);
  for (let x = 0; x < width; x++) {
    const from = Math.floor((x * n) / width);
    const to = Math.max(from + 1, Math.floor(((x + 1) * n) / width));
    let lo = Infinity,
      hi = -Infinity;
    for (let i = from; i < to; i++) {
      lo = Math.min(lo, values[2 * i]);
      hi = Math.max(hi, values[2 * i + 1]);
    }
    out[2 * x] = lo;
    out[2 * x + 1] = hi;
  }
  return out;
}
