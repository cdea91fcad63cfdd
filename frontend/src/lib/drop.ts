// Files dropped on the studio. A file dropped where nothing takes it would
// be opened by the browser in place of the studio, and in the desktop
// window (a WebKitGTK view with no address bar) there is no way back but
// a restart: guardPage refuses every such drop. The panels that take a
// file (the script, a cloned voice's recording, the pronunciations) are
// drop targets (dropTarget), each doing what its own file picker does.

/** Whether a drag carries files (not text or a link dragged inside the page). */
export function carriesFiles(e: DragEvent): boolean {
  return Array.from(e.dataTransfer?.types ?? []).includes('Files');
}

/**
 * Refuses a file dropped outside a drop target: no "open the file" default,
 * and the pointer says so while it is dragged. Returns the remover.
 */
export function guardPage(win: Window): () => void {
  const refuse = (e: DragEvent) => {
    if (!carriesFiles(e) || e.defaultPrevented) return; // a target took it
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = 'none';
  };
  win.addEventListener('dragover', refuse);
  win.addEventListener('drop', refuse);
  return () => {
    win.removeEventListener('dragover', refuse);
    win.removeEventListener('drop', refuse);
  };
}

/**
 * A Svelte action: node takes a dropped file (the first, when several are
 * dropped) and gives it to take; while files are dragged over it, it has
 * the class drop-over.
 */
export function dropTarget(node: HTMLElement, take: (f: File) => void) {
  let handler = take;
  let depth = 0; // dragenter/dragleave pairs of the node's children
  const over = (on: boolean) => node.classList.toggle('drop-over', on);
  const enter = (e: DragEvent) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    depth++;
    over(true);
  };
  const hover = (e: DragEvent) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
  };
  const leave = (e: DragEvent) => {
    if (!carriesFiles(e)) return;
    depth = Math.max(0, depth - 1);
    if (depth === 0) over(false);
  };
  const drop = (e: DragEvent) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    depth = 0;
    over(false);
    const f = e.dataTransfer?.files?.[0];
    if (f) handler(f);
  };
  node.addEventListener('dragenter', enter);
  node.addEventListener('dragover', hover);
  node.addEventListener('dragleave', leave);
  node.addEventListener('drop', drop);
  return {
    update(next: (f: File) => void) {
      handler = next;
    },
    destroy() {
      node.removeEventListener('dragenter', enter);
      node.removeEventListener('dragover', hover);
      node.removeEventListener('dragleave', leave);
      node.removeEventListener('drop', drop);
    },
  };
}

/** A picked or dropped file's bytes; one that cannot be read (a folder dropped as a file) is refused by name. */
export async function fileBytes(f: File): Promise<Uint8Array> {
  try {
    return new Uint8Array(await f.arrayBuffer());
  } catch {
    throw new Error(`${f.name} could not be read (is it a folder?)`);
  }
}

/**
 * A dropped file's text: UTF-8 (a byte order mark dropped), refused with
 * a reason naming the file when it is larger than limit bytes or not text.
 */
export async function fileText(f: File, limit: number): Promise<string> {
  if (f.size > limit) throw new Error(`${f.name} is ${f.size} bytes, more than ${limit}`);
  const bytes = await fileBytes(f);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`${f.name} is not UTF-8 text`);
  }
  if (text.includes('\0')) throw new Error(`${f.name} is not text (it holds NUL bytes)`);
  return text;
}
