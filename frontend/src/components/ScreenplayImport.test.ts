import { flushSync, mount, unmount } from 'svelte';
import { describe, expect, it, vi } from 'vitest';
import ScreenplayImport from './ScreenplayImport.svelte';
import type { ScreenplayPreview, ScreenplayProject, Voice } from '../lib/types';

const voices = [{ name: 'Ada', reference: 'r-ada' }, { name: 'Own' }] as Voice[];

/** The service's preview: Anna's name suggests the cloned voice Ada; narrated, a Narrator speaks first. */
function preview(narrate: boolean): ScreenplayPreview {
  const characters = [...(narrate ? [{ name: 'Narrator', lines: 2 }] : []), { name: 'ANNA', lines: 2 }, { name: 'BEN', lines: 1 }];
  return {
    screenplay: { script: narrate ? '<|speaker:0|>Rain.\n<|speaker:1|>Hi.' : '<|speaker:0|>Hi.', characters, lines: 5, left_out: narrate ? [] : [{ what: 'action paragraphs', count: 2 }] },
    cast: narrate ? ['', 'Ada'] : ['Ada'],
  };
}

async function settle() {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
  flushSync();
}

describe('ScreenplayImport', () => {
  it('suggests voices, keeps the voices chosen when the action is narrated, and makes the project only when asked', async () => {
    const parse = vi.fn(async (_text: string, narrate: boolean) => preview(narrate));
    const made: ScreenplayProject[] = [];
    const create = vi.fn(async (r: ScreenplayProject) => {
      made.push(r);
      return made.length === 1 ? 'a project called "Play" exists: choose another name' : '';
    });
    const onclose = vi.fn();
    const target = document.createElement('div');
    document.body.appendChild(target);
    const c = mount(ScreenplayImport, { target, props: { fileName: 'Play.fountain', text: 'the file', voices, names: [], parse, create, onclose } });
    await settle();
    const select = (i: number) => target.querySelector<HTMLSelectElement>(`select[name="screenplay_voice_${i}"]`)!;
    expect([...select(0).options].map((o) => o.value)).toEqual(['', 'Ada']); // the cloned voices only
    expect(select(0).value).toBe('Ada');
    expect(target.querySelector('[data-screenplay-summary]')!.textContent).toContain('left out: 2 action paragraphs');
    select(1).value = 'Ada';
    select(1).dispatchEvent(new Event('change', { bubbles: true }));
    const narrate = target.querySelector<HTMLInputElement>('input[name="screenplay_narrate"]')!;
    narrate.checked = true;
    narrate.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    expect(parse).toHaveBeenLastCalledWith('the file', true);
    expect([0, 1, 2].map((i) => select(i).value)).toEqual(['', 'Ada', 'Ada']);

    // A refusal is shown and the dialog stays; then the project is made and it closes.
    const submit = target.querySelector<HTMLButtonElement>('button[type="submit"]')!;
    submit.click();
    await settle();
    expect(target.querySelector('[data-problem="screenplay"]')!.textContent).toContain('exists');
    expect(onclose).not.toHaveBeenCalled();
    const name = target.querySelector<HTMLInputElement>('input[name="screenplay_name"]')!;
    name.value = 'Play 2';
    name.dispatchEvent(new Event('input', { bubbles: true }));
    submit.click();
    await settle();
    expect(made[1]).toEqual({ name: 'Play 2', text: 'the file', narrate: true, cast: ['', 'Ada', 'Ada'] });
    expect(onclose).toHaveBeenCalledOnce();
    unmount(c);
  });

  it('names the project after the file, free among the projects, and shows nothing to make before the first answer', async () => {
    let answer!: (p: ScreenplayPreview) => void;
    const parse = vi.fn(() => new Promise<ScreenplayPreview>((r) => (answer = r)));
    const target = document.createElement('div');
    const c = mount(ScreenplayImport, { target, props: { fileName: 'Act 1.txt', text: 't', voices, names: ['Act 1', 'Act 1 2'], parse, create: async () => '', onclose: () => {} } });
    flushSync();
    expect(target.textContent).toContain('Reading Act 1.txt');
    expect(target.querySelector<HTMLButtonElement>('button[type="submit"]')!.disabled).toBe(true);
    answer(preview(false));
    await settle();
    expect(target.querySelector<HTMLInputElement>('input[name="screenplay_name"]')!.value).toBe('Act 1 3');
    expect(target.querySelector<HTMLButtonElement>('button[type="submit"]')!.disabled).toBe(false);
    unmount(c);
  });
});
