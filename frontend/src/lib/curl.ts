// "Copy as curl": the speech API request that makes the take the studio
// would make now (script, sampling settings and the cast's voice), for a
// terminal. The API speaks one voice per request, so a script whose
// speakers are cast in different voices becomes one command per line.
import type { Sampling } from './types';
import { lineRequest, splitLines } from './lines';

export interface CurlTake {
  address: string; // http://host:port
  model: string;
  text: string;
  sampling: Sampling;
  seed: number;
  max_frames: number;
  /** The voice (by name) the speech API speaks in; absent: the model's own. */
  voice?: string;
  /** Where the command writes the audio (default take.wav). */
  out?: string;
}

/** Quotes s for a POSIX shell (single quotes; a ' becomes '\''). */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function curlCommand(t: CurlTake): string {
  const body = {
    model: t.model,
    input: t.text,
    response_format: 'wav',
    temperature: t.sampling.temperature,
    top_p: t.sampling.top_p,
    top_k: t.sampling.top_k,
    seed: t.seed,
    max_frames: t.max_frames,
    ...(t.voice ? { voice: t.voice } : {}),
  };
  return [
    `curl -sS --fail-with-body ${shellQuote(t.address.replace(/\/$/, '') + '/v1/audio/speech')}`,
    `  -H 'Content-Type: application/json'`,
    // Only when the server was started with an API key (serve --api-key).
    `  \${PROSCENIUM_API_KEY:+-H "Authorization: Bearer $PROSCENIUM_API_KEY"}`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
    `  -o ${shellQuote(t.out ?? 'take.wav')}`,
  ].join(' \\\n');
}

/**
 * The commands for a script with its cast: one command when at most one
 * voice is cast and the script has no other speaker in a cast voice (that
 * voice speaks it all); else one per line, each in its speaker's voice.
 */
export function curlForScript(t: Omit<CurlTake, 'voice' | 'out'>, cast: string[]): string {
  const voices = cast.filter(Boolean);
  const lines = splitLines(t.text);
  const speakers = new Set(lines.map((l) => l.speaker));
  if (voices.length === 0) return curlCommand(t);
  if (speakers.size <= 1 && cast[[...speakers][0] ?? 0]) {
    // One speaker in one voice: the tag would only name it again.
    return curlCommand({ ...t, text: lines.map((l) => lineRequest(l, cast).text).join('\n\n'), voice: cast[[...speakers][0] ?? 0] });
  }
  return lines
    .map((l, i) => {
      const r = lineRequest(l, cast);
      const out = `line${String(i + 1).padStart(2, '0')}.wav`;
      return `# line ${i + 1}, speaker ${l.speaker}: ${r.cast[0] ?? "the model's voice"}\n` + curlCommand({ ...t, text: r.text, voice: r.cast[0], out });
    })
    .join('\n\n');
}
