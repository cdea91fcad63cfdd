import { describe, expect, it, vi } from 'vitest';
import { dropTarget, fileText, guardPage } from './drop';

// A drag event as a browser makes it: its dataTransfer lists "Files" when
// files are dragged.
function drag(type: string, files: File[] = [], kinds = files.length ? ['Files'] : ['text/plain']): DragEvent {
  const e = new Event(type, { bubbles: true, cancelable: true }) as DragEvent;
  Object.defineProperty(e, 'dataTransfer', { value: { types: kinds, files, dropEffect: 'none' } });
  return e;
}

describe('guardPage', () => {
  it('refuses a file dropped outside a target, and leaves text drags and taken drops alone', () => {
    const off = guardPage(window);
    const f = new File(['x'], 'a.txt');
    const e = drag('drop', [f]);
    document.body.dispatchEvent(e);
    expect(e.defaultPrevented).toBe(true);
    const over = drag('dragover', [f]);
    document.body.dispatchEvent(over);
    expect([over.defaultPrevented, over.dataTransfer!.dropEffect]).toEqual([true, 'none']);
    const text = drag('drop');
    document.body.dispatchEvent(text);
    expect(text.defaultPrevented).toBe(false);

    const target = document.createElement('div');
    document.body.appendChild(target);
    const take = vi.fn();
    const action = dropTarget(target, take);
    const hover = drag('dragover', [f]);
    target.dispatchEvent(hover);
    expect(hover.dataTransfer!.dropEffect).toBe('copy');
    off();
    const after = drag('drop', [f]);
    document.body.dispatchEvent(after);
    expect(after.defaultPrevented).toBe(false);
    action.destroy();
    target.remove();
  });
});

describe('dropTarget', () => {
  it('gives the first dropped file to its handler and shows the drag over it', () => {
    const node = document.createElement('section');
    const child = document.createElement('input');
    node.appendChild(child);
    const take = vi.fn();
    const action = dropTarget(node, take);
    const a = new File(['a'], 'a.wav');
    node.dispatchEvent(drag('dragenter', [a]));
    child.dispatchEvent(drag('dragenter', [a]));
    child.dispatchEvent(drag('dragleave', [a]));
    expect(node.classList.contains('drop-over')).toBe(true); // still over the node
    const e = drag('drop', [a, new File(['b'], 'b.wav')]);
    child.dispatchEvent(e);
    expect(take).toHaveBeenCalledWith(a);
    expect([e.defaultPrevented, node.classList.contains('drop-over')]).toEqual([true, false]);
    const next = vi.fn();
    action.update(next);
    node.dispatchEvent(drag('drop', [a]));
    expect(next).toHaveBeenCalledTimes(1);
    node.dispatchEvent(drag('drop')); // text, not files
    expect(next).toHaveBeenCalledTimes(1);
    action.destroy();
    node.dispatchEvent(drag('drop', [a]));
    expect(next).toHaveBeenCalledTimes(1);
  });
});

describe('fileText', () => {
  it('reads UTF-8 without its byte order mark, and refuses what is not text or too long, by name', async () => {
    expect(await fileText(new File([new Uint8Array([0xef, 0xbb, 0xbf]), 'Né.'], 'bom.txt'), 100)).toBe('Né.');
    await expect(fileText(new File([new Uint8Array([0x41, 0xff, 0x42])], 'latin1.txt'), 100)).rejects.toThrow('latin1.txt is not UTF-8 text');
    await expect(fileText(new File(['a\0b'], 'x.bin'), 100)).rejects.toThrow('x.bin is not text');
    await expect(fileText(new File(['12345'], 'long.txt'), 4)).rejects.toThrow('long.txt is 5 bytes, more than 4');
    const folder = new File([], 'Takes');
    Object.defineProperty(folder, 'arrayBuffer', { value: () => Promise.reject(new DOMException('not readable', 'NotReadableError')) });
    await expect(fileText(folder, 4)).rejects.toThrow('Takes could not be read (is it a folder?)');
  });
});
