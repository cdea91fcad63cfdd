import { flushSync, mount, unmount } from 'svelte';
import { describe, expect, it } from 'vitest';
import ScriptEditor from './ScriptEditor.svelte';

function editor(script: string) {
  const saved: string[] = [];
  const props = $state({
    script,
    save: async (s: string) => (saved.push(s), ''),
    count: async () => '',
    check: async () => null,
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
  return { props, area, drop, problem, close: () => (unmount(c), target.remove()) };
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
    expect(ed.problem()).toBe('long.txt would make the script 65539 bytes, more than 65536: nothing was put in');
    ed.close();
  });
});
