// "Copy as curl": the speech API request that makes the take the studio
// would make now (script and sampling settings), for a terminal.
import type { Sampling } from './types';

export interface CurlTake {
  address: string; // http://host:port
  model: string;
  text: string;
  sampling: Sampling;
  seed: number;
  max_frames: number;
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
  };
  return [
    `curl -sS --fail-with-body ${shellQuote(t.address.replace(/\/$/, '') + '/v1/audio/speech')}`,
    `  -H 'Content-Type: application/json'`,
    // Only when the server was started with an API key (serve --api-key).
    `  \${PROSCENIUM_API_KEY:+-H "Authorization: Bearer $PROSCENIUM_API_KEY"}`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
    `  -o take.wav`,
  ].join(' \\\n');
}
