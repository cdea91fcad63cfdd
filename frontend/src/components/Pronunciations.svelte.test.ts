import { flushSync, mount, tick, unmount } from 'svelte';
import { describe, expect, it } from 'vitest';
import Pronunciations from './Pronunciations.svelte';
import type { Settings } from '../lib/types';

function panel(lexicon: { written: string; spoken: string }[], answer = '') {
  const saved: Settings[] = [];
  const props = $state({
    settings: { lexicon } as unknown as Settings,
    save: async (s: Settings) => {
      saved.push(s);
      if (!answer) props.settings = s;
      return answer;
    },
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
  return { target, saved, input, type, submit, close: () => unmount(c) };
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
});
