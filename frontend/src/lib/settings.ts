// Settings are saved whole, from several panels at once (the script's
// debounced draft, a sampling field, the volume): a save made from an older
// copy must not undo another panel's change that landed meanwhile.
import type { Settings } from './types';

/**
 * Applies what `next` changed relative to `base` (the settings it was made
 * from) onto `latest`, field by field (top level).
 */
export function mergeChange(base: Settings, next: Settings, latest: Settings): Settings {
  const out = { ...latest } as Record<string, unknown>;
  const b = base as unknown as Record<string, unknown>;
  const n = next as unknown as Record<string, unknown>;
  for (const k of Object.keys(n)) {
    if (JSON.stringify(b[k]) !== JSON.stringify(n[k])) out[k] = n[k];
  }
  return out as unknown as Settings;
}
