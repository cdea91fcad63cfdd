import { describe, expect, it } from 'vitest';
import { curlCommand, shellQuote } from './curl';

/** Reads a shell word made of single-quoted parts and \' escapes, as sh does. */
function unquote(word: string): string {
  let out = '';
  for (const m of word.matchAll(/'([^']*)'|\\(.)/g)) out += m[1] ?? m[2];
  expect(word.replace(/'[^']*'|\\./g, '')).toBe(''); // nothing outside quotes
  return out;
}

describe('curlCommand', () => {
  const take = {
    address: 'http://127.0.0.1:7860/',
    model: 'drama-3',
    text: "It's <|speaker:1|>[softly] \"done\" $HOME `x`\nline two",
    sampling: { temperature: 0.65, top_p: 0.9, top_k: 30 },
    seed: 7,
    max_frames: 40,
  };
  it('sends the script and settings exactly, whatever the script holds', () => {
    const cmd = curlCommand(take);
    expect(cmd).toContain("curl -sS --fail-with-body 'http://127.0.0.1:7860/v1/audio/speech'");
    // The shell reads the -d argument back as the JSON body, byte for byte.
    const arg = cmd.split(' -d ')[1].split(' \\\n')[0];
    const body = JSON.parse(unquote(arg));
    expect(body).toEqual({ model: 'drama-3', input: take.text, response_format: 'wav', temperature: 0.65, top_p: 0.9, top_k: 30, seed: 7, max_frames: 40 });
  });
  it('quotes for a POSIX shell', () => {
    expect(shellQuote("a'b $c")).toBe(`'a'\\''b $c'`);
    expect(unquote(shellQuote("a'b $c"))).toBe("a'b $c");
  });
});
