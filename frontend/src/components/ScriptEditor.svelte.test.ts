import { flushSync, mount, unmount } from 'svelte';
import { describe, expect, it } from 'vitest';
import ScriptEditor from './ScriptEditor.svelte';

function editor(script: string, screenplay?: (f: File) => void) {
  const saved: string[] = [];
  const props = $state({
    script,
    save: async (s: string) => (saved.push(s), ''),
    count: async () => '',
    check: async () => null,
    screenplay,
  });
  const target = document.createElement('div');
  document.body.appendChild(target);
  const c = mount(ScriptEditor, { target, props });
  flushSync();
  const area = target.querySelector('textarea')!;
  const drop = async (f: File) => {
    const e = new Event('drop', { bubbles: true, cancelable: true });
    Object.defineProperty(e, 'dataTransfer', { value: { types: ['Files'], files: [f] } });
    area.dispatchEvent(e);
    for (let i = 0; i < 6; i++) await new Promise((r) => setTimeout(r, 0));
    flushSync();
    return e.defaultPrevented;
  };
  const problem = () => target.querySelector('.foot .error')?.textContent ?? '';
  const settle = async () => {
    for (let i = 0; i < 6; i++) await new Promise((r) => setTimeout(r, 0));
    flushSync();
  };
  return { props, area, drop, problem, settle, target, c, close: () => (unmount(c), target.remove()) };
}

describe('ScriptEditor: a dropped text file', () => {
  it('goes in at the caret, replacing the selection, line endings as typed', async () => {
    const ed = editor('Hello. Goodbye.');
    ed.area.setSelectionRange(7, 15); // "Goodbye."
    expect(await ed.drop(new File(['<|speaker:1|>Second.\r\nThird.'], 'scene.txt'))).toBe(true);
    expect(ed.props.script).toBe('Hello. <|speaker:1|>Second.\nThird.');
    expect(ed.problem()).toBe('');
    ed.close();
  });

  it('is refused, changing nothing, when it is not text or would pass the limit', async () => {
    const ed = editor('Kept.');
    await ed.drop(new File([new Uint8Array([0x52, 0x49, 0x46, 0x46, 0xff, 0x00])], 'take.wav'));
    expect([ed.props.script, ed.problem()]).toEqual(['Kept.', 'take.wav is not UTF-8 text']);
    await ed.drop(new File(['x'.repeat((64 << 10) - 2)], 'long.txt'));
    expect(ed.props.script).toBe('Kept.');
    expect(ed.problem()).toBe('long.txt would make the script 65539 bytes, more than 65536: nothing was changed');
    ed.close();
  });
});

describe('ScriptEditor: a dropped screenplay', () => {
  it('goes to Import screenplay, the script unchanged', async () => {
    const taken: string[] = [];
    const ed = editor('Kept.', (f) => taken.push(f.name));
    expect(await ed.drop(new File(['ANNA\nHello.'], 'Act 1.fountain'))).toBe(true);
    expect([ed.props.script, taken]).toEqual(['Kept.', ['Act 1.fountain']]);
    ed.close();
  });
});

describe('ScriptEditor: find and replace', () => {
  const bar = (ed: ReturnType<typeof editor>) => ed.target.querySelector('[data-region="find"]');
  const field = (ed: ReturnType<typeof editor>, name: string) => ed.target.querySelector(`input[name="${name}"]`) as HTMLInputElement;
  const type = async (ed: ReturnType<typeof editor>, name: string, value: string) => {
    field(ed, name).value = value;
    field(ed, name).dispatchEvent(new Event('input', { bubbles: true }));
    await ed.settle();
  };
  const key = async (ed: ReturnType<typeof editor>, name: string, k: string, shiftKey = false) => {
    const e = new KeyboardEvent('keydown', { key: k, shiftKey, bubbles: true, cancelable: true });
    field(ed, name).dispatchEvent(e);
    await ed.settle();
    return e;
  };
  const button = (ed: ReturnType<typeof editor>, name: string) => [...ed.target.querySelectorAll('button')].find((b) => b.textContent === name || b.getAttribute('aria-label') === name)!;
  const count = (ed: ReturnType<typeof editor>) => ed.target.querySelector('[data-matches]')!.textContent;
  const highlighted = (ed: ReturnType<typeof editor>) => [...ed.target.querySelectorAll('.overlay .found-match, .overlay .found-current')].map((s) => `${s.textContent}${s.classList.contains('found-current') ? '*' : ''}`);

  it('opens on the selection, counts and highlights the matches, and steps through them with the caret', async () => {
    const ed = editor('Ann said: ann? [to Ann] Anna.');
    ed.area.setSelectionRange(0, 3);
    await (ed.c as unknown as { openFind: () => Promise<void> }).openFind();
    await ed.settle();
    expect(bar(ed)).not.toBeNull();
    expect(field(ed, 'find').value).toBe('Ann');
    expect(count(ed)).toBe('1 of 4');
    expect(highlighted(ed)).toEqual(['Ann*', 'ann', 'Ann', 'Ann']);
    await key(ed, 'find', 'Enter');
    expect([count(ed), ed.area.selectionStart, ed.area.selectionEnd]).toEqual(['2 of 4', 10, 13]);
    await key(ed, 'find', 'Enter', true);
    await key(ed, 'find', 'Enter', true);
    expect(count(ed)).toBe('4 of 4'); // wraps
    button(ed, 'Whole words').click();
    await ed.settle();
    button(ed, 'Match case').click();
    await ed.settle();
    expect([count(ed), highlighted(ed).length]).toEqual(['2 of 2', 2]);
    await type(ed, 'find', 'Bea');
    expect(count(ed)).toBe('no match');
    expect(button(ed, 'Replace all').disabled).toBe(true);
    ed.close();
  });

  it('replaces one match or all of them, and Esc closes the bar without reaching the studio', async () => {
    const ed = editor('Ann met ann. Anna left.');
    await (ed.c as unknown as { openFind: (r?: boolean) => Promise<void> }).openFind(true);
    await type(ed, 'find', 'ann');
    button(ed, 'Whole words').click();
    await ed.settle();
    await type(ed, 'replace', 'Bea');
    await key(ed, 'replace', 'Enter');
    expect(ed.props.script).toBe('Bea met ann. Anna left.');
    expect(count(ed)).toBe('1 of 1');
    await type(ed, 'replace', 'Cy');
    button(ed, 'Replace all').click();
    await ed.settle();
    expect(ed.props.script).toBe('Bea met Cy. Anna left.');
    expect(ed.target.querySelector('[data-replaced]')?.textContent).toBe('replaced 1');
    let reached = false;
    const listen = () => (reached = true);
    window.addEventListener('keydown', listen);
    const esc = await key(ed, 'find', 'Escape');
    window.removeEventListener('keydown', listen);
    expect([bar(ed), reached, esc.defaultPrevented]).toEqual([null, false, true]);
    ed.close();
  });

  it('goes on after a replacement, never into it', async () => {
    const ed = editor('Ann, Ann and Ann.');
    await (ed.c as unknown as { openFind: (r?: boolean) => Promise<void> }).openFind(true);
    await type(ed, 'find', 'Ann');
    await type(ed, 'replace', 'Anna');
    await key(ed, 'replace', 'Enter');
    await key(ed, 'replace', 'Enter');
    expect(ed.props.script).toBe('Anna, Anna and Ann.');
    expect([count(ed), ed.area.selectionStart]).toEqual(['3 of 3', 15]);
    ed.close();
  });

  it('refuses a Replace all that would pass the script limit, changing nothing', async () => {
    const text = 'z'.repeat(60_000) + ' ab'.repeat(1000);
    const ed = editor(text);
    await (ed.c as unknown as { openFind: () => Promise<void> }).openFind();
    await type(ed, 'find', 'ab');
    expect(count(ed)).toBe('1 of 1000');
    await type(ed, 'replace', 'abcdef');
    button(ed, 'Replace all').click();
    await ed.settle();
    expect(ed.props.script).toBe(text);
    expect(ed.problem()).toBe('Replacing 1000 matches would make the script 67000 bytes, more than 65536: nothing was changed');
    ed.close();
  });
});
