import { describe, expect, it } from 'vitest';
import { curlCommand, curlForScript, shellQuote } from './curl';

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

describe('curlForScript', () => {
  const t = { address: 'http://127.0.0.1:7860', model: 'drama-3', sampling: { temperature: 1, top_p: 0.9, top_k: 30 }, seed: 0, max_frames: 40 };
  const bodies = (cmd: string) => [...cmd.matchAll(/ -d ('(?:[^']|'\\'')*')/g)].map((m) => JSON.parse(unquote(m[1])));
  it('is one command without a cast', () => {
    expect(bodies(curlForScript({ ...t, text: 'Hi.' }, []))).toEqual([expect.objectContaining({ input: 'Hi.' })]);
    expect(bodies(curlForScript({ ...t, text: 'Hi.' }, []))[0].voice).toBeUndefined();
  });
  it('names the voice of a one-speaker script', () => {
    expect(bodies(curlForScript({ ...t, text: 'Hi.\n\nBye.' }, ['Ada']))).toEqual([expect.objectContaining({ input: 'Hi.\n\nBye.', voice: 'Ada' })]);
  });
  it('is one command per line, each in its voice, for a cast of two', () => {
    const cmd = curlForScript({ ...t, text: '<|speaker:0|>Hi.\n<|speaker:1|>Hello.\n\n<|speaker:0|>Bye.' }, ['Ada', 'Bea']);
    expect(bodies(cmd).map((b) => [b.input, b.voice])).toEqual([
      ['Hi.', 'Ada'],
      ['Hello.', 'Bea'],
      ['Bye.', 'Ada'],
    ]);
    expect(cmd).toContain("-o 'line03.wav'");
  });
});
