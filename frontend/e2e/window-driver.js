// The window test's driver: window.e2e.mjs hands this script, after
// page-check.js and axe-core, to the desktop window built with -tags e2e
// (windowtest.go), which runs it in the window's page once. It works the
// studio as a person would — fields typed into, buttons pressed, keys — so
// every call goes through the window's own Wails bindings and events
// (window.go.app.Service, the sound card, the native save dialog's
// binding), never the browser mode's HTTP API. It reports over Wails
// events: windowtest:log lines, windowtest:shot for a screenshot of the
// window, windowtest:done with the verdict.
//
// window.__windowTest (set before this script by window.e2e.mjs):
//   phase   "first": a new window, the demo model, a scene, takes, stars,
//           Speak all, the scene export, the layout at three sizes;
//           "restart": the same folders opened again — the project, its
//           lines, chosen takes and sampling are back
//   chosen  (restart) the chosen take of each line when the first run ended
//   shots   save screenshots at each size (window-<stage>-<w>x<h>)
(async () => {
  const cfg = window.__windowTest;
  const rt = window.runtime;
  const service = window.go.app.Service;
  const sizes = [
    [900, 700],
    [1280, 800],
    [1920, 1080],
  ];
  // Wails hands each event to Go in a goroutine of its own, so log lines
  // may come out of order: what the harness needs travels in the verdict.
  const log = (s) => rt.EventsEmit('windowtest:log', String(s));
  const record = {};
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const fail = (msg) => {
    throw new Error(msg);
  };
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];
  const text = (el) => (el?.textContent ?? '').replace(/\s+/g, ' ').trim();

  /** fn's first truthy answer (fn may be async), polled; fails naming what after ms. */
  async function until(what, fn, ms = 10_000) {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (Date.now() > end) fail(`${what}: not within ${ms / 1000} s`);
      await sleep(50);
    }
  }
  /** The button in root whose accessible name (aria-label, else its text) is name. */
  const button = (root, name) => $$('button', root).find((b) => (b.getAttribute('aria-label') ?? text(b)) === name);
  async function press(root, name) {
    const b = await until(`button "${name}"`, () => button(root, name));
    if (b.disabled) fail(`button "${name}" is disabled`);
    b.click();
  }
  /** Types into a field as the keyboard would (input), then leaves it (change). */
  function fill(el, value) {
    el.focus();
    const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, value);
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    el.blur();
  }
  function choose(select, value) {
    select.value = value;
    select.dispatchEvent(new Event('change', { bubbles: true }));
  }
  const field = (name) => $(`[data-region="sampling"] input[name="${name}"]`);
  /** Fills a sampling field and waits until the service's settings hold it and the panel says saved. */
  async function setSampling(name, value) {
    fill(field(name), value);
    await until(`${name} ${value} saved`, async () => {
      const s = await service.Settings();
      return String(s.sampling[name] ?? s[name]) === value && text($('[data-region="sampling"] .foot')) === 'saved';
    });
  }
  const lines = () => $$('[data-region="lines"] li.line');
  const lineTakes = (line) => $$('[data-line-take]', line);
  const chosenOf = (line) => $('button.star[aria-pressed="true"]', line)?.closest('[data-line-take]')?.dataset.lineTake;
  const finished = (line) => lineTakes(line).filter((t) => t.dataset.state === 'finished').length;
  const settled = async () => until('the project saved', () => $('[data-region="project"][data-unsaved="false"]'), 10_000);

  async function shot(name) {
    const done = new Promise((resolve) => rt.EventsOnce('windowtest:shot-done', resolve));
    rt.EventsEmit('windowtest:shot', { name, width: window.innerWidth, height: window.innerHeight });
    const r = await Promise.race([done, sleep(20_000)]);
    if (!r || r.error) fail(`screenshot ${name}: ${r ? r.error : 'no answer in 20 s'}`);
  }

  /** The window at each size: nothing wider than it, no text out of its box, axe-core's verdict. */
  async function atSizes(stage) {
    for (const [w, h] of sizes) {
      await resize(w, h);
      await sleep(300);
      const m = await window.studioPageCheck();
      if (m.width > w || m.overflowing.length) fail(`${stage} at ${w}×${h}: page ${m.width} px wide; overflowing: ${m.overflowing.slice(0, 6).join('; ')}`);
      if (m.violations.length) fail(`${stage} at ${w}×${h}: axe-core: ${m.violations.join('; ')}`);
      if (cfg.shots) await shot(`window-${stage}-${w}x${h}`);
      log(`${stage} at ${w}×${h}: nothing overflows, axe-core finds no serious violation${cfg.shots ? ' (screenshot)' : ''}`);
    }
    await resize(1280, 800);
  }

  /**
   * The window at w×h in the display's top left corner (windowtest_gtk.go
   * does it on GTK's main loop: the runtime's WindowSetSize calls GTK from
   * another thread, and now and then the window kept its size).
   */
  async function resize(w, h) {
    rt.EventsEmit('windowtest:size', { width: w, height: h });
    await until(`the window at ${w}×${h}`, () => window.innerWidth === w && window.innerHeight === h, 5_000).catch((e) =>
      fail(`${e.message}: it is ${window.innerWidth}×${window.innerHeight}`),
    );
  }

  async function first() {
    // A new window: the chip says there is no model and offers the two ways
    // to get one; Speak disabled with its reason; empty lines and takes.
    const chip = await until('the model chip', () => $('[data-region="modelchip"]'), 20_000);
    await until('"No model" in the chip', () => text(chip).includes('No model'), 20_000);
    for (const b of ['Use demo', 'Choose…']) if (!button(chip, b)) fail(`the chip has no "${b}"`);
    if (!$('[data-region="transport"] button.speak').disabled) fail('Speak is enabled without a model');
    const why = text($('[data-region="transport"] [data-blocked]'));
    if (!why.includes('Load a model first')) fail(`Speak's reason: ${why}`);
    await until('the empty states', () => $('[data-region="lines"] [data-empty="lines"]') && $('[data-region="takes"] [data-empty="takes"]'));
    await until('project "Untitled"', () => $('[data-region="project"][data-project="Untitled"]'));
    log(`new window: chip "${text(chip)}"; Speak disabled: "${why}"; empty lines and takes; project "Untitled"`);
    await atSizes('new');

    // Seed -1: our own message, nothing saved.
    fill(field('seed'), '-1');
    const seedWhy = await until('the seed -1 message', () => text($('[data-region="sampling"] [data-problem="seed"]')));
    if (seedWhy !== '-1 is below 0: use 0 or more') fail(`seed -1 says ${JSON.stringify(seedWhy)}`);
    if ((await service.Settings()).seed !== 0) fail('seed -1 reached the settings');
    await setSampling('seed', '3');
    // Top-p as typed (it must come back after the restart too).
    await setSampling('top_p', '0.955');
    const slider = $('[data-region="sampling"] [data-field="top_p"] input[type="range"]');
    if (field('top_p').value !== '0.955' || slider.value !== '0.955' || (await service.Settings()).sampling.top_p !== 0.955) fail(`top-p 0.955: field ${field('top_p').value}, slider ${slider.value}`);
    log(`seed -1 → "${seedWhy}"; top-p 0.955 in the field, the slider and the settings`);

    // The demo model from the chip (made on first use, then loaded on the CPU backend).
    await press(chip, 'Use demo');
    await until('the demo model loaded', () => text($('[role="status"]', chip)).includes('Demo model · CPU'), 120_000);
    await setSampling('max_frames', '40');
    log(`demo model loaded from the chip: "${text($('[role="status"]', chip))}"`);

    // Three lines, two speakers.
    const script = '<|speaker:0|>Good evening. The house is quiet.\n<|speaker:1|>Too quiet, if you ask me.\n\n<|speaker:0|>Then listen.';
    fill($('textarea[aria-label="Script"]'), script);
    await until('three lines', () => lines().length === 3);
    const speakers = lines().map((l) => l.dataset.speaker).join(',');
    if (speakers !== '0,1,0') fail(`lines' speakers: ${speakers}`);
    log('a three-line script for two speakers splits into three lines (speakers 0, 1, 0)');

    // Find and replace in WebKitGTK: Ctrl+F opens the bar from anywhere in the window; Replace all is one edit that
    // undo takes back; Esc closes the bar.
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'f', ctrlKey: true, bubbles: true, cancelable: true }));
    const bar = await until('the find bar', () => $('[data-region="find"]'));
    fill($('input[name="find"]', bar), 'quiet');
    await until('two matches of "quiet"', () => $('[data-matches="2"]', bar));
    fill($('input[name="replace"]', bar), 'still');
    await press(bar, 'Replace all');
    const area = $('textarea[aria-label="Script"]');
    await until('Replace all', () => area.value === script.replaceAll('quiet', 'still'));
    area.focus();
    document.execCommand('undo');
    await until('Replace all undone', () => area.value === script);
    $('input[name="find"]', bar).dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, cancelable: true }));
    await until('the find bar closed', () => !$('[data-region="find"]'));
    log('find "quiet": 2 matches; Replace all with "still" and undo; Esc closed the bar');

    // Line 1 gets a take through the window (the sound card, where there is one).
    await press(lines()[0], 'Speak line 1');
    await until('line 1 has a finished take', () => finished(lines()[0]) === 1, 90_000);
    let t1 = lineTakes(lines()[0])[0].dataset.lineTake;
    if (chosenOf(lines()[0]) !== t1) await press(lines()[0], `Choose take ${t1} for line 1`);
    await until('line 1 starred', () => chosenOf(lines()[0]) === t1);
    log(`line 1: take #${t1} finished ("${text($('[data-diff]', lines()[0]))}") and starred`);
    // Where there is a sound card the take plays through it (Service.Play);
    // under Xvfb there is none, and the window says so.
    const out = (await service.Playback()).output;
    if (out.state === 'ready') {
      await press(lines()[0], `Play take ${t1}`);
      await until('take 1 playing through the sound card', async () => (await service.Playback()).position_s > 0, 10_000);
      log(`take #${t1} plays through the sound card`);
    } else log(`no sound card here (${out.state}: ${out.message}): the take was made, not heard`);

    // Speak all: the lines without a chosen take, in order; line 1 keeps its take.
    await press($('[data-region="lines"]'), 'Speak all');
    await until('every line with a finished, chosen take', () => lines().every((l) => finished(l) >= 1 && chosenOf(l)), 180_000);
    if (lineTakes(lines()[0]).length !== 1 || chosenOf(lines()[0]) !== t1) fail('Speak all spoke line 1 again, which had a chosen take');
    const firstChosen = lines().map(chosenOf);
    log(`Speak all: lines 2 and 3 spoken, takes #${firstChosen.join(', #')} chosen`);

    // Line 2 again at another temperature: its row says only that; the star moves when clicked.
    await setSampling('temperature', '0.5');
    await press(lines()[1], 'Speak line 2');
    await until('line 2 has two finished takes', () => finished(lines()[1]) === 2, 90_000);
    const newest = lineTakes(lines()[1])[0];
    const diff = text($('[data-diff]', newest));
    if (!/ · T 0\.5$/.test(diff)) fail(`the second take of line 2 says ${JSON.stringify(diff)}, want only "T 0.5"`);
    const newId = newest.dataset.lineTake;
    await press(newest, `Choose take ${newId} for line 2`);
    await until(`take ${newId} chosen for line 2`, () => chosenOf(lines()[1]) === newId);
    if ($$('button.star[aria-pressed="true"]', lines()[1]).length !== 1) fail('line 2 has two chosen takes');
    const chosen = lines().map(chosenOf);
    log(`line 2 spoken again: "${diff}"; take #${newId} starred`);
    await settled();

    // Progress you can read: the whole scene as one long take, read (and
    // photographed) while it runs, then stopped.
    await setSampling('max_frames', '2048');
    await press($('[data-region="transport"]'), 'Speak');
    const running = await until('a running take with frames', () => {
      const r = $('[data-region="takes"] li[data-state="running"] [data-waiting]');
      return /^making audio: (\d+) frames of 2048 · /.exec(text(r))?.[1] >= 40 && r;
    }, 60_000);
    const progress = text(running);
    for (const part of ['elapsed', 'left', 'RTF', 'first audio']) if (!progress.includes(part)) fail(`the running take's progress says ${JSON.stringify(progress)}: no "${part}"`);
    if (cfg.shots) await shot('window-take-1280x800');
    await press($('[data-region="transport"]'), 'Stop');
    await until('the long take stopped', () => !$('[data-region="takes"] li[data-state="running"]'), 20_000);
    await setSampling('max_frames', '40');
    log(`a long take's progress: "${progress}"; stopped`);

    // Scene export through the window's save dialog binding (answered by the test).
    const scene = $('[data-region="scene"]');
    choose($('select[name="scene_format"]', scene), 'wav');
    fill($('input[name="scene_target"]', scene), '-16');
    await press(scene, 'Export scene');
    const answer = await until('the scene export', () => $('[data-scene-answer]', scene), 60_000);
    if (answer.dataset.sceneAnswer !== 'ok') fail(`scene export: ${text(answer)}`);
    const path = /^wrote (\S+\.wav):/.exec(text(answer))?.[1];
    if (!path) fail(`scene export says ${JSON.stringify(text(answer))}`);
    record.scene = path;
    log(`the scene panel says "${text(answer)}"`);

    // Play scene through the window's bindings: the preview is the three chosen takes; where there is a sound card
    // it plays there and the waveform shows the scene, else the status line says why it cannot play.
    await press($('[data-region="lines"]'), 'Play scene');
    if (out.state === 'ready') {
      await until('the scene playing through the sound card', async () => (await service.Playback()).scene_preview_id > 0, 10_000);
      await until('the scene in the waveform', () => /scene of Untitled: 3 of 3 lines/.test(text($('[data-region="waveform"] h2'))));
      await service.StopPlayback();
      log('Play scene plays the scene through the sound card');
    } else {
      const why = await until('why the scene cannot play', () => $$('[data-region="status"] [data-notice="error"]').find((n) => /audio output/.test(text(n))));
      log(`Play scene without a sound card: "${text(why).replace(/ ×$/, '')}"`);
    }
    const pv = await service.PreviewScene('Untitled');
    if (pv.lines.map((l) => String(l.take)).join() !== lines().map(chosenOf).join() || pv.skipped.length !== 0) fail(`the scene preview: ${JSON.stringify({ lines: pv.lines, skipped: pv.skipped })}`);

    // The Delete question is inside the window (the take is far down the list).
    const oldest = $$('[data-region="takes"] li[data-take]').at(-1);
    $$('button', oldest).find((b) => (b.getAttribute('aria-label') ?? '').startsWith('Select take')).click();
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'Delete', bubbles: true }));
    const dialog = await until('the Delete question', () => $('[data-region="takes"] [role="alertdialog"]'));
    await sleep(300);
    const box = dialog.getBoundingClientRect();
    if (box.top < 0 || box.left < 0 || box.bottom > window.innerHeight || box.right > window.innerWidth) fail(`the Delete question is outside the window: ${JSON.stringify(box)}`);
    await press(dialog, 'Keep');
    log(`the Delete question is in view at ${Math.round(box.left)},${Math.round(box.top)} ${Math.round(box.width)}×${Math.round(box.height)}`);

    await atSizes('scene');
    await settled();
    record.chosen = chosen;
  }

  async function restart() {
    await until('project "Untitled" with three lines', () => $('[data-region="project"][data-project="Untitled"]') && lines().length === 3, 20_000);
    const speakers = lines().map((l) => l.dataset.speaker).join(',');
    if (speakers !== '0,1,0') fail(`lines' speakers after the restart: ${speakers}`);
    const chosen = await until('the chosen takes', () => {
      const c = lines().map(chosenOf);
      return c.every(Boolean) && c;
    });
    if (chosen.join() !== cfg.chosen.join()) fail(`chosen takes after the restart: ${chosen}, want ${cfg.chosen}`);
    await sleep(500); // the project's settings, were they to differ, are applied by now
    if (field('top_p').value !== '0.955' || field('temperature').value !== '0.5') fail(`sampling after the restart: top-p ${field('top_p').value}, T ${field('temperature').value}`);
    log(`restart keeps project "Untitled": lines for speakers ${speakers}, chosen takes #${chosen.join(', #')}, top-p 0.955, T 0.5`);

    // Files dropped in the window's web view, as WebKit delivers a drop (the files in the DataTransfer): a text
    // file on the script goes in at the caret; anywhere else the drop is refused, so WebKit does not open the file
    // in place of the studio.
    const drop = (el, name, content) => {
      const dt = new DataTransfer();
      dt.items.add(new File([content], name, { type: 'text/plain' }));
      return ['dragenter', 'dragover', 'drop'].map((t) => {
        const e = new DragEvent(t, { bubbles: true, cancelable: true, dataTransfer: dt });
        el.dispatchEvent(e);
        return e.defaultPrevented;
      });
    };
    const area = $('textarea[aria-label="Script"]');
    const before = area.value;
    area.focus();
    area.setSelectionRange(before.length, before.length);
    const onScript = drop(area, 'more.txt', '\n\nDropped in.');
    await until('the dropped text in the script', () => area.value === `${before}\n\nDropped in.`);
    const stray = drop($('[data-region="takes"] h2') ?? document.body, 'stray.txt', 'x');
    if (!onScript.every(Boolean) || !stray[1] || !stray[2]) fail(`drops: on the script ${onScript}, elsewhere ${stray} (default prevented)`);
    log('files dropped in the window: a text file went into the script at the caret, a stray drop was refused');

    // The pronunciations exported through the save dialog's binding (answered by the test) as a lexicon file.
    const pron = $('[data-region="pronunciations"]');
    fill($('input[name="lexicon_written"]', pron), 'SQL');
    fill($('input[name="lexicon_spoken"]', pron), 'sequel');
    await press(pron, 'Add');
    await until('the pronunciation listed', () => $('li[data-pronunciation="SQL"]', pron));
    await press(pron, 'Export…');
    const wrote = await until('the pronunciations exported', () => /^wrote 1 pronunciation to (\S+)$/.exec(text($('[data-done="lexicon"]', pron)))?.[1]);
    record.lexicon = wrote;
    log(`the pronunciations panel says "${text($('[data-done="lexicon"]', pron))}"`);
  }

  let verdict;
  try {
    if (cfg.phase === 'first') await first();
    else if (cfg.phase === 'restart') await restart();
    else fail(`no phase ${cfg.phase}`);
    verdict = { ok: true, record };
  } catch (e) {
    verdict = { ok: false, record, message: e instanceof Error ? `${e.message} (${(e.stack ?? '').split('\n').slice(1, 3).join(' < ')})` : String(e) };
  }
  await sleep(300); // after the log lines
  rt.EventsEmit('windowtest:done', verdict);
})();
