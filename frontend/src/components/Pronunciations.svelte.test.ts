import { flushSync, mount, tick, unmount } from 'svelte';
import { describe, expect, it } from 'vitest';
import Pronunciations from './Pronunciations.svelte';
import type { LexiconEntry, Settings } from '../lib/types';
import { lexiconFile, mergeLexicon } from '../lib/lexicon';

// read stands for the service's ReadLexicon: a JSON array is its
// pronunciations, anything else is refused as the service says.
async function read(data: string): Promise<LexiconEntry[]> {
  if (!data.startsWith('[')) throw new Error('invalid: not JSON: give an array of pronunciations, or a settings file');
  return JSON.parse(data);
}

function panel(lexicon: { written: string; spoken: string }[], answer = '') {
  const saved: Settings[] = [];
  const props = $state({
    settings: { lexicon } as unknown as Settings,
    save: async (s: Settings) => {
      saved.push(s);
      if (!answer) props.settings = s;
      return answer;
    },
    read,
    exportFile: async () => 'downloaded pronunciations.json (1 pronunciation)',
  });
  const target = document.createElement('div');
  const c = mount(Pronunciations, { target, props });
  flushSync();
  const input = (name: string) => target.querySelector(`input[name="${name}"]`) as HTMLInputElement;
  const type = (name: string, value: string) => {
    input(name).value = value;
    input(name).dispatchEvent(new Event('input'));
  };
  const submit = async () => {
    target.querySelector('form')!.dispatchEvent(new Event('submit', { cancelable: true }));
    for (let i = 0; i < 3; i++) await tick();
    flushSync();
  };
  const pick = async (name: string, content: string) => {
    const file = new File([content], name, { type: 'application/json' });
    Object.defineProperty(input('lexicon_file'), 'files', { value: [file], configurable: true });
    input('lexicon_file').dispatchEvent(new Event('change', { bubbles: true })); // as a browser's
    for (let i = 0; i < 6; i++) await new Promise((r) => setTimeout(r, 0));
    flushSync();
  };
  const status = () => target.querySelector('[role="status"]')!.textContent!.replace(/\s+/g, ' ').trim();
  return { target, saved, input, type, submit, pick, status, close: () => unmount(c) };
}

describe('Pronunciations: the lexicon in the settings', () => {
  it('adds a pronunciation, and changes the one of the same written form', async () => {
    const p = panel([{ written: 'SQL', spoken: 'ess queue ell' }]);
    p.type('lexicon_written', ' Nguyen ');
    p.type('lexicon_spoken', 'Win');
    await p.submit();
    expect(p.saved.at(-1)!.lexicon).toEqual([
      { written: 'SQL', spoken: 'ess queue ell' },
      { written: 'Nguyen', spoken: 'Win' },
    ]);
    expect(p.input('lexicon_written').value).toBe('');
    p.type('lexicon_written', 'SQL');
    p.type('lexicon_spoken', 'sequel');
    flushSync();
    expect(p.target.querySelector('form button')!.textContent).toBe('Change');
    await p.submit();
    expect(p.saved.at(-1)!.lexicon).toEqual([
      { written: 'SQL', spoken: 'sequel' },
      { written: 'Nguyen', spoken: 'Win' },
    ]);
    expect(p.target.querySelectorAll('li[data-pronunciation]').length).toBe(2);
    p.close();
  });

  it('removes one', async () => {
    const p = panel([{ written: 'SQL', spoken: 'sequel' }, { written: 'Nguyen', spoken: 'Win' }]);
    (p.target.querySelector('button[aria-label="Remove the pronunciation of SQL"]') as HTMLButtonElement).click();
    for (let i = 0; i < 3; i++) await tick();
    expect(p.saved.at(-1)!.lexicon).toEqual([{ written: 'Nguyen', spoken: 'Win' }]);
    p.close();
  });

  it('shows the service\'s refusal and keeps the fields, and asks for both forms', async () => {
    const p = panel([], 'lexicon: pronunciation 1: the written form "[x]" holds markup');
    p.type('lexicon_written', '[x]');
    p.type('lexicon_spoken', 'y');
    await p.submit();
    expect(p.target.querySelector('[data-problem="lexicon"]')!.textContent).toContain('holds markup');
    expect(p.input('lexicon_written').value).toBe('[x]');
    const empty = panel([]);
    empty.type('lexicon_written', 'x');
    await empty.submit();
    expect(empty.saved.length).toBe(0);
    expect(empty.target.querySelector('[data-problem="lexicon"]')!.textContent).toContain('as written and as it is to be said');
    p.close();
    empty.close();
  });

  it('imports a file: new pronunciations added, a known word changed, a bad file refused by name', async () => {
    const p = panel([{ written: 'SQL', spoken: 'ess queue ell' }, { written: 'Nguyen', spoken: 'Win' }]);
    await p.pick('glossary.json', JSON.stringify([{ written: 'SQL', spoken: 'sequel' }, { written: 'Nguyen', spoken: 'Win' }, { written: '东京', spoken: 'Tokyo' }]));
    expect(p.saved.at(-1)!.lexicon).toEqual([
      { written: 'SQL', spoken: 'sequel' },
      { written: 'Nguyen', spoken: 'Win' },
      { written: '东京', spoken: 'Tokyo' },
    ]);
    expect(p.status()).toContain('imported glossary.json: 1 new, 1 changed');
    await p.pick('glossary.json', JSON.stringify([{ written: 'SQL', spoken: 'sequel' }]));
    expect(p.saved.length).toBe(1);
    expect(p.status()).toContain('nothing new');
    await p.pick('notes.txt', 'SQL = sequel');
    expect(p.saved.length).toBe(1);
    expect(p.target.querySelector('[data-problem="lexicon"]')!.textContent).toBe('notes.txt: not JSON: give an array of pronunciations, or a settings file');
    p.close();
  });

  it('exports what it holds, saying what was done; nothing to export, no Export', async () => {
    const p = panel([{ written: 'SQL', spoken: 'sequel' }]);
    const button = [...p.target.querySelectorAll('button')].find((b) => b.textContent === 'Export…')!;
    button.click();
    for (let i = 0; i < 3; i++) await tick();
    flushSync();
    expect(p.status()).toContain('downloaded pronunciations.json (1 pronunciation)');
    p.close();
    const empty = panel([]);
    expect([...empty.target.querySelectorAll('button')].find((b) => b.textContent === 'Export…')!.disabled).toBe(true);
    empty.close();
  });

  it('narrows the list to what is typed as written, in either form and any case, and edits the one clicked', () => {
    const p = panel([
      { written: 'SQL', spoken: 'sequel' },
      { written: 'MySQL', spoken: 'my sequel' },
      { written: 'Nguyen', spoken: 'Win' },
    ]);
    expect(p.target.querySelector('h2')!.textContent).toBe('Pronunciations · 3');
    p.type('lexicon_written', 'sql');
    flushSync();
    const listed = () => [...p.target.querySelectorAll('li[data-pronunciation]')].map((li) => li.getAttribute('data-pronunciation'));
    expect(listed()).toEqual(['SQL', 'MySQL']);
    expect(p.target.querySelector('[data-shown]')!.textContent).toBe('2 of 3 shown: those like “sql”');
    p.type('lexicon_written', 'WIN');
    flushSync();
    expect(listed()).toEqual(['Nguyen']);
    (p.target.querySelector('li[data-pronunciation="Nguyen"] button.link') as HTMLButtonElement).click();
    flushSync();
    expect([p.input('lexicon_written').value, p.input('lexicon_spoken').value]).toEqual(['Nguyen', 'Win']);
    p.type('lexicon_written', '');
    flushSync();
    expect(listed().length).toBe(3);
    expect(p.target.querySelector('[data-shown]')).toBeNull();
    p.close();
  });

  it("shows the settings' refusal of an import, naming the file", async () => {
    const p = panel([], 'lexicon: the pronunciation lexicon has 501 entries, at most 500');
    await p.pick('big.json', JSON.stringify([{ written: 'a', spoken: 'b' }]));
    expect(p.target.querySelector('[data-problem="lexicon"]')!.textContent).toBe('big.json: lexicon: the pronunciation lexicon has 501 entries, at most 500');
    p.close();
  });
});

describe('mergeLexicon', () => {
  it('changes known words in place and adds new ones in the file\'s order, once each', () => {
    const cur = [{ written: 'A', spoken: 'a' }, { written: 'B', spoken: 'b' }];
    const got = mergeLexicon(cur, [{ written: 'C', spoken: 'c' }, { written: 'A', spoken: 'x' }, { written: 'C', spoken: 'c2' }, { written: 'B', spoken: 'b' }]);
    expect(got).toEqual({ next: [{ written: 'A', spoken: 'x' }, { written: 'B', spoken: 'b' }, { written: 'C', spoken: 'c2' }], added: 1, changed: 2 });
    expect(cur[0].spoken).toBe('a');
  });
});

describe('lexiconFile', () => {
  it('writes one pronunciation to a line, and reads back as it was', () => {
    const lex = [{ written: 'SQL', spoken: 'sequel' }, { written: '"东京"', spoken: 'Tokyo' }];
    const text = lexiconFile(lex);
    expect(text.split('\n')).toEqual(['[', '  {"written":"SQL","spoken":"sequel"},', '  {"written":"\\"东京\\"","spoken":"Tokyo"}', ']', '']);
    expect(JSON.parse(text)).toEqual(lex);
    expect(lexiconFile([])).toBe('[]\n');
  });
});

