import { flushSync, mount, unmount } from 'svelte';
import { describe, expect, it } from 'vitest';
import CastChips from './CastChips.svelte';
import type { Voice } from '../lib/types';

const voices = [
  { name: 'Ada', reference: 'r-ada' },
  { name: 'Bea', reference: 'r-bea' },
] as Voice[];

function chips(props: { cast: string[]; characters?: string[]; ready?: string[] | null; castReady?: boolean }) {
  const target = document.createElement('div');
  const c = mount(CastChips, { target, props: { speakers: [0, 1, 2], voices, characters: undefined, ...props } });
  flushSync();
  const chip = (n: number) => target.querySelector(`[data-speaker="${n}"]`)!;
  return { target, chip, close: () => unmount(c) };
}

describe('CastChips: which cast voices the voice cache holds', () => {
  it('marks a held voice ready and one not held not ready, and says nothing of the model\'s voice', () => {
    const r = chips({ cast: ['Ada', 'Bea', ''], ready: ['Ada'] });
    expect(r.chip(0).querySelector('[data-voice-ready]')).not.toBeNull();
    expect(r.chip(1).querySelector('[data-voice-ready]')).toBeNull();
    expect(r.chip(1).querySelector('[data-voice-not-ready]')!.getAttribute('title')).toContain('reads its reference first');
    expect(r.chip(2).querySelector('[data-voice-ready], [data-voice-not-ready]')).toBeNull();
    expect(r.target.querySelector('[data-cast-ready]')).toBeNull();
    r.close();
  });

  it('says the whole script is ready when the cache holds the cast together', () => {
    const r = chips({ cast: ['Ada', 'Bea'], ready: ['Ada', 'Bea'], castReady: true });
    expect(r.target.querySelectorAll('[data-voice-ready]').length).toBe(2);
    expect(r.target.querySelector('[data-cast-ready]')!.textContent).toBe('whole script ready');
    r.close();
  });

  it('says nothing without a loaded model, nor of a voice no longer in the library', () => {
    const none = chips({ cast: ['Ada', 'Bea'], ready: null, castReady: true });
    expect(none.target.querySelector('[data-voice-ready], [data-voice-not-ready], [data-cast-ready]')).toBeNull();
    none.close();
    const gone = chips({ cast: ['Cy'], ready: ['Cy'] });
    expect(gone.chip(0).querySelector('[data-voice-ready], [data-voice-not-ready]')).toBeNull();
    gone.close();
  });
});

describe('CastChips: the characters\' names', () => {
  it('names a speaker as typed (its spaces tidied), unnames it when emptied, and shows a named speaker the script no longer has', () => {
    const state: { characters: string[] | undefined } = { characters: undefined };
    const target = document.createElement('div');
    const c = mount(CastChips, {
      target,
      props: {
        speakers: [0, 1],
        voices,
        cast: [],
        get characters() {
          return state.characters;
        },
        set characters(v) {
          state.characters = v;
        },
      },
    });
    flushSync();
    const field = (n: number) => target.querySelector<HTMLInputElement>(`input[name="character_${n}"]`)!;
    expect(field(1).placeholder).toBe('Speaker 1');
    field(1).value = '  Dr.   Ben Okafor ';
    field(1).dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
    expect(state.characters).toEqual(['', 'Dr. Ben Okafor']);
    field(0).value = 'Anna';
    field(0).dispatchEvent(new Event('change', { bubbles: true }));
    field(1).value = ' ';
    field(1).dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
    expect(state.characters).toEqual(['Anna']);
    // A name is cut to 60 bytes of UTF-8 (the project refuses more), at a character: 20 three-byte characters.
    field(0).value = '张'.repeat(25);
    field(0).dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
    expect(state.characters).toEqual(['张'.repeat(20)]);
    unmount(c);

    const named = chips({ cast: [], characters: ['', '', '', 'Cy'] });
    expect(named.target.querySelector<HTMLInputElement>('input[name="character_3"]')!.value).toBe('Cy');
    named.close();
  });
});
