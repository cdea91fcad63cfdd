// Browser test: Debian's Chromium (driven by playwright-core, no downloaded
// browsers) loads the studio UI from `proscenium serve --ui` on 127.0.0.1,
// types a script, changes a sampling setting, presses Speak and checks what
// the Go service answered: first with no model ("no model loaded"), then
// with the demo checkpoint loaded through the model panel's "Use the demo
// model" (load progress, inspect's summary), a take whose waveform and
// streamed PCM arrive as it is made, real figures in the readouts, a WAV
// export (a browser download) checked byte by byte against the take's PCM,
// Delete and a lower takes limit that remove nothing until confirmed, and
// the security headers every response carries. The studio as an instrument:
// the layout at 800, 1024, 1280 and 1920 px (nothing wider than the window;
// at 1280×800 the script, Speak/Stop and the waveform in view without
// scrolling), number fields that refuse "abc" and "0,7" (Speak and Re-run
// too), structural tokens flagged in the editor, the character count the
// server counts, the highlighting aligned under a scrollbar, seeking on the
// waveform, takes made through the speech API appearing as API takes (and a
// studio take saying it waits for one), the server panel's request log and
// its curl command run for real, Space and Delete, messages that clear, and
// the page reading its state again after the server restarts. Voices: one
// cloned from a file in the Cast panel, cast for a take and spoken through
// the API by name, and one made by POST /v1/audio/voices.
// SCREENSHOTS=DIR saves the page at 800, 1280 and 1920 px there.
//
//   node e2e/speak.e2e.mjs PATH/TO/proscenium
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { scratchEnv, studioURL } from './studio-server.mjs';

const cli = process.argv[2];
if (!cli) {
  console.error('usage: node e2e/speak.e2e.mjs PATH/TO/proscenium');
  process.exit(2);
}
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const scratch = mkdtempSync(join(tmpdir(), 'proscenium-e2e-'));
const settingsFile = join(scratch, 'settings.json');
let server;
let context;

function fail(msg) {
  throw new Error(msg);
}

/** Starts the server and resolves with the URL it prints. */
function startServer(port = 0, extra = []) {
  server = spawn(cli, ['serve', '--ui', '--host', '127.0.0.1', '--port', String(port), '--settings', settingsFile, ...extra], {
    stdio: ['ignore', 'pipe', 'inherit'],
    // Takes, the demo model and exports go under the scratch directory.
    env: scratchEnv(scratch),
  });
  return studioURL(server, 20);
}

async function main() {
  const url = await startServer();
  console.log(`e2e: server at ${url}`);
  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  // The UI runs under its own Content-Security-Policy: anything it blocks is an error.
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) pageErrors.push(m.text());
  });
  const first = await page.goto(url);
  const h = first.headers();
  if (h['x-frame-options'] !== 'DENY' || !/frame-ancestors 'none'/.test(h['content-security-policy'] ?? '')) fail(`UI response headers: ${JSON.stringify(h)}`);
  console.log(`e2e: ${await context.browser()?.version?.() ?? 'chromium'} loaded ${await page.title()}`);

  for (const r of ['script', 'sampling', 'model', 'readouts', 'transport', 'takes', 'waveform', 'server', 'shortcuts', 'status']) {
    await page.locator(`[data-region="${r}"]`).waitFor({ timeout: 10_000 });
  }
  await page.locator('[data-connection="connected"]').waitFor({ timeout: 10_000 });
  const statusWords = await page.locator('[data-region="status"]').textContent();
  if (/ALSA|snd_|pcm\.c|host/i.test(statusWords) || !statusWords.includes('Audio plays in this browser')) fail(`status line: ${statusWords}`);
  const shortcuts = await page.locator('[data-region="shortcuts"]').textContent();
  for (const k of ['Ctrl+Enter', 'Esc', 'Space', 'Delete']) if (!shortcuts.includes(k)) fail(`shortcuts list lacks ${k}: ${shortcuts}`);
  // The model panel and readouts show the service's state, not numbers.
  await page.locator('[data-region="model"] [role="status"]').filter({ hasText: 'no model loaded' }).waitFor();
  const rtf = await page.locator('[data-readout="rtf"]').textContent();
  if (rtf !== '—') fail(`real-time factor readout without a model: ${rtf}`);

  // Type a script and change a sampling setting, once the first project's
  // settings are applied (the sampling fields made from them).
  await page.locator('[data-region="sampling"][data-project="Untitled"]').waitFor();
  const script = 'Friends, Romans, countrymen, lend me your ears.';
  await page.getByRole('textbox', { name: 'Script' }).fill(script);
  const temperature = page.locator('[data-region="sampling"] input[name="temperature"]');
  await temperature.fill('0.65');
  await temperature.press('Tab'); // commits the field: the change event
  await page.locator('[data-region="sampling"] [role="status"]').filter({ hasText: 'saved' }).waitFor();

  // An out-of-range value: the service refuses it and says why.
  const topP = page.locator('[data-region="sampling"] input[name="top_p"]');
  await topP.fill('1.5');
  await topP.press('Tab');
  await page.locator('[data-region="sampling"] [data-problem="top_p"]').filter({ hasText: 'top_p must be in (0, 1]' }).waitFor();
  await topP.fill('0.9');
  await topP.press('Tab');
  await page.locator('[data-region="sampling"] [role="status"]').filter({ hasText: 'saved' }).waitFor();

  // What the fields show is what Speak uses: "abc" and "0,7" are refused
  // next to the field, and nothing reaches the service (Speak refusing them
  // too is App.test.ts's: without a model Speak is disabled).
  for (const [typed, reason] of [['abc', '"abc" is not a number'], ['0,7', 'use a decimal point: 0.7']]) {
    await temperature.fill(typed);
    await temperature.press('Tab');
    await page.locator('[data-region="sampling"] [data-problem="temperature"]').filter({ hasText: reason }).waitFor();
    if ((await api(page, 'Settings')).sampling.temperature !== 0.65) fail(`"${typed}" changed the stored temperature`);
  }
  await temperature.fill('0.65');
  await temperature.press('Tab');
  await page.locator('[data-region="sampling"] [role="status"]').filter({ hasText: 'saved' }).waitFor();
  // The slider and the field show one value.
  if ((await page.getByRole('slider', { name: 'Temperature slider' }).inputValue()) !== '0.65') fail('the temperature slider does not show 0.65');
  // The dice picks a seed the service stores; then back to seed 0.
  const seedField = page.locator('[data-region="sampling"] input[name="seed"]');
  await page.getByRole('button', { name: 'Random seed' }).click();
  await page.locator('[data-region="sampling"] [role="status"]').filter({ hasText: 'saved' }).waitFor();
  const rolled = await seedField.inputValue();
  if (!/^\d+$/.test(rolled) || (await api(page, 'Settings')).seed !== Number(rolled)) fail(`dice seed ${rolled}, stored ${(await api(page, 'Settings')).seed}`);
  await seedField.fill('0');
  await seedField.press('Tab');
  await page.locator('[data-region="sampling"] [role="status"]').filter({ hasText: 'saved' }).waitFor();
  console.log(`e2e: fields refuse "abc" and "0,7"; the dice rolled seed ${rolled}`);

  // Presets: save the current sampling as one, then choose another.
  page.once('dialog', (d) => d.accept('Calm read'));
  await page.locator('[data-region="sampling"]').getByRole('button', { name: 'Save as preset…' }).click();
  await page.locator('[data-region="sampling"] select option', { hasText: 'Calm read' }).waitFor({ state: 'attached' });
  const presets = (await api(page, 'Settings')).presets;
  const calm = presets.find((p) => p.name === 'Calm read');
  if (!calm || calm.sampling.temperature !== 0.65 || calm.sampling.top_p !== 0.9) fail(`presets ${JSON.stringify(presets)}`);
  const temperatureBecomes = async (want) => {
    for (const end = Date.now() + 10_000; Date.now() < end; await page.waitForTimeout(50)) {
      if ((await api(page, 'Settings')).sampling.temperature === want && (await temperature.inputValue()) === String(want)) return;
    }
    fail(`temperature did not become ${want}`);
  };
  await page.getByRole('combobox', { name: 'Preset' }).selectOption('Greedy (T 0)');
  await temperatureBecomes(0);
  await page.getByRole('combobox', { name: 'Preset' }).selectOption('Calm read');
  await temperatureBecomes(0.65);

  // Studio settings: the service validates them too.
  const limit = page.locator('[data-region="studio-settings"] input[name="takes_limit"]');
  await limit.fill('0');
  await limit.press('Tab');
  await page.locator('[data-region="studio-settings"] .error').filter({ hasText: 'takes_limit_bytes must be at least 1 MiB' }).waitFor();
  await limit.fill('1');
  await limit.press('Tab');
  await page.locator('[data-region="studio-settings"] [role="status"]').filter({ hasText: 'saved' }).waitFor();

  // Speak without a model: disabled, and the reason is beside it.
  const speakButton = page.getByRole('button', { name: 'Speak', exact: true });
  if (!(await speakButton.isDisabled())) fail('Speak is enabled without a model');
  const said = (await page.locator('[data-region="transport"] [data-blocked]').textContent()).trim();
  if (!said.startsWith('Load a model first')) fail(`beside the disabled Speak: ${JSON.stringify(said)}`);
  console.log(`e2e: Speak without a model is disabled: ${said}`);

  // The same answers straight from the service: settings stored and on disk.
  const settings = await page.evaluate(async () => {
    const r = await fetch('/api/Settings', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[]' });
    return r.json();
  });
  if (settings.sampling.temperature !== 0.65) fail(`service temperature ${settings.sampling.temperature}, want 0.65`);
  if (settings.sampling.top_p !== 0.9) fail(`service top_p ${settings.sampling.top_p}, want 0.9 (1.5 must have been refused)`);
  if (settings.script !== script) fail(`service script ${JSON.stringify(settings.script)}`);
  const onDisk = JSON.parse(readFileSync(settingsFile, 'utf8'));
  if (onDisk.sampling.temperature !== 0.65 || onDisk.script !== script) fail(`settings file holds ${JSON.stringify(onDisk)}`);
  console.log(`e2e: service settings: temperature ${settings.sampling.temperature}, top_p ${settings.sampling.top_p}, script saved`);

  if ((await page.locator('[data-region="takes"]').textContent()).indexOf('No takes yet.') < 0) fail('a take appeared without a model');

  // The demo model through the model panel, one click: written under
  // XDG_DATA_HOME, inspected (the memory it needs), then loaded.
  const modelPanel = page.locator('[data-region="model"]');
  await modelPanel.locator('[data-no-checkpoint]').waitFor({ timeout: 10_000 }); // offered with the demo
  await modelPanel.getByRole('button', { name: 'Use the demo model' }).click();
  await modelPanel.locator('[data-memory-needed]').waitFor({ timeout: 60_000 });
  const demoDir = await page.getByRole('textbox', { name: 'Checkpoint directory' }).inputValue();
  if (demoDir !== join(scratch, 'data', 'proscenium', 'demo-model')) fail(`demo model at ${demoDir}`);
  const needed = await modelPanel.locator('[data-memory-needed]').textContent();
  if (!/\d/.test(needed)) fail(`memory needed: ${needed}`);
  console.log(`e2e: demo model written to ${demoDir}; inspect says it needs ${needed}`);
  await page.locator('[data-region="model"] [data-state="loaded"]').waitFor({ timeout: 60_000 });
  const loaded = await page.locator('[data-region="model"] [role="status"]').textContent();
  if (!loaded.includes('demo model')) fail(`model status after loading the demo: ${loaded}`);
  const progress = await api(page, 'LoadStatus');
  if (!progress.done || progress.total_bytes <= 0 || progress.read_bytes !== progress.total_bytes) fail(`load progress ${JSON.stringify(progress)}`);
  console.log(`e2e: demo loaded by the same click → ${loaded.trim()}; progress ${progress.read_bytes} of ${progress.total_bytes} bytes`);

  const frames = 40;
  const maxFrames = page.locator('[data-region="sampling"] input[name="max_frames"]');
  await maxFrames.fill(String(frames));
  await maxFrames.press('Tab');
  await page.locator('[data-region="sampling"] [role="status"]').filter({ hasText: 'saved' }).waitFor();
  // Structural tokens are flagged before Speak (the engine's own rules,
  // through the service), and Speak refuses them without starting a take.
  const scriptBox = page.getByRole('textbox', { name: 'Script' });
  await scriptBox.fill('Say <|im_end|> now, <|speaker:1|> fine.');
  await page.locator('[data-region="script"] .overlay .refused').filter({ hasText: '<|im_end|>' }).waitFor({ timeout: 10_000 });
  await page.locator('[data-region="script"] [data-script-problems]').filter({ hasText: '<|im_end|> is not allowed' }).waitFor();
  if (await page.locator('[data-region="script"] .overlay .refused').filter({ hasText: 'speaker' }).count()) fail('a valid speaker tag was flagged');
  await page.getByRole('button', { name: 'Speak', exact: true }).click();
  await page.locator('[data-region="transport"] output[data-answer="error"]').filter({ hasText: 'the script cannot be spoken' }).waitFor();
  if ((await api(page, 'Takes')).length) fail('Speak started a take with a structural token in the script');
  // Characters as the server counts them (code points: 🎭 is one).
  await scriptBox.fill('🎭 Friends');
  await page.locator('[data-region="script"] [data-count][data-chars="9"]').waitFor({ timeout: 10_000 });
  // A script longer than the editor: both layers keep one scrollbar width,
  // so the highlighting wraps where the text does and scrolls with it.
  await scriptBox.fill(Array.from({ length: 80 }, (_, i) => `[line ${i}] <whisper>Friends</whisper>, Romans, countrymen, lend me your ears.`).join('\n'));
  const aligned = await page.evaluate(async () => {
    const ta = document.querySelector('[data-region="script"] textarea');
    const ov = document.querySelector('[data-region="script"] .overlay');
    ta.scrollTop = ta.scrollHeight;
    ta.dispatchEvent(new Event('scroll'));
    await new Promise((r) => setTimeout(r, 50));
    return { overflow: ta.scrollHeight > ta.clientHeight, taW: ta.clientWidth, ovW: ov.clientWidth, taTop: ta.scrollTop, ovTop: ov.scrollTop, taH: ta.scrollHeight, ovH: ov.scrollHeight };
  });
  if (!aligned.overflow || aligned.taW !== aligned.ovW || aligned.taTop !== aligned.ovTop || Math.abs(aligned.taH - aligned.ovH) > 30) fail(`highlighting not aligned: ${JSON.stringify(aligned)}`);
  console.log(`e2e: <|im_end|> flagged and refused; 🎭 counts as one character; overlay aligned under a scrollbar ${JSON.stringify(aligned)}`);

  // The token count comes from the loaded model's tokenizer.
  await page.getByRole('textbox', { name: 'Script' }).fill('<|speaker:1|>[softly] Friends, <whisper>Romans</whisper>.');
  await page.locator('[data-region="script"] [data-count]').filter({ hasText: /\d+ tokens/ }).waitFor({ timeout: 10_000 });
  await page.locator('[data-region="script"] .overlay .tag').first().waitFor();

  // Speak with the keyboard shortcut; watch the take while it runs. A demo
  // take lasts a fraction of a second: the page itself records what it
  // shows at every change (a MutationObserver), so nothing is missed.
  await page.evaluate((frames) => {
    const seen = (window.__seen = { running: false, fps: false, growing: false, noTakeYet: '' });
    const look = () => {
      if (!document.querySelector('[data-region="takes"] li[data-state="running"]')) return;
      seen.running = true;
      if (document.querySelector('[data-readout="fps"]').textContent !== '—') seen.fps = true;
      const b = Number(document.querySelector('[data-region="waveform"] canvas').getAttribute('data-buckets'));
      if (b > 0 && b < (frames * 2048) / 512) seen.growing = true;
      const words = document.querySelector('[data-region="readouts"] [role="status"]').textContent + document.querySelector('[data-region="waveform"]').textContent;
      if (words.includes('no take yet')) seen.noTakeYet = words;
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  }, frames);
  await page.getByRole('textbox', { name: 'Script' }).press('Control+Enter');
  await page.locator('[data-region="transport"] output[data-answer="ok"]').filter({ hasText: 'take #1 started' }).waitFor();
  const take = page.locator('[data-region="takes"] li[data-state="finished"]');
  await take.waitFor({ timeout: 120_000 });
  const seen = await page.evaluate(() => window.__seen);
  if (seen.noTakeYet) fail(`"no take yet" while take #1 runs: ${seen.noTakeYet}`);
  await take.waitFor({ timeout: 1000 });
  const takeText = await take.textContent();
  if (!new RegExp(`${frames} frames, length`).test(takeText) || !takeText.includes('T 0.65') || takeText.includes('not saved')) fail(`finished take: ${takeText}`);
  console.log(`e2e: take → ${takeText.replace(/\s+/g, ' ').trim()} (seen while running: ${JSON.stringify(seen)})`);
  if (!seen.running) fail('the take was never seen running');

  // The waveform holds the whole take; the browser received its PCM.
  const samples = frames * 2048;
  await page.locator(`[data-region="waveform"] canvas[data-samples="${samples}"]`).waitFor({ timeout: 10_000 });
  const buckets = Number(await page.locator('[data-region="waveform"] canvas').getAttribute('data-buckets'));
  if (buckets !== samples / 512) fail(`waveform buckets ${buckets}, want ${samples / 512}`);
  const heard = page.locator('[data-heard-take="1"]');
  await heard.waitFor({ timeout: 10_000 });
  const heardSamples = Number(await heard.getAttribute('data-heard-samples'));
  const heardChunks = Number(await heard.getAttribute('data-heard-chunks'));
  if (heardSamples !== samples) fail(`the browser received ${heardSamples} samples of PCM, the take has ${samples}`);
  // Chunks of 1, 2, 4, 8, 16 frames, then the rest (9): six.
  if (heardChunks !== 6) fail(`the browser received ${heardChunks} PCM chunks, the engine's policy makes 6`);
  console.log(`e2e: waveform ${buckets} buckets; Web Audio got ${heardChunks} chunks, ${heardSamples} samples`);

  // The readouts now show the service's figures, the same it answers directly.
  const stats = await api(page, 'Stats');
  const want = stats.last_take.real_time_factor.toFixed(3);
  await page.locator('[data-readout="rtf"]').filter({ hasText: want }).waitFor({ timeout: 10_000 });
  const used = await page.locator('[data-readout="used"]').textContent();
  if (used === '—' || !stats.memory || stats.memory.used_bytes <= 0) fail(`memory readout ${used}, service memory ${JSON.stringify(stats.memory)}`);
  // No memory cap: the bar is drawn against the computer's memory (the CPU
  // backend's device), never a full bar of the peak.
  const bar = page.locator('[data-region="readouts"] [data-bar-of="total"]');
  await bar.waitFor({ timeout: 10_000 });
  const barPct = parseFloat(await bar.locator('[data-bar]').evaluate((e) => e.style.width));
  if (!(barPct > 0 && barPct < 100) || stats.total_bytes <= stats.memory.used_bytes || !(await bar.getAttribute('title')).includes('against all')) fail(`memory bar ${barPct}% of total ${stats.total_bytes}`);
  if (!(await page.locator('[data-region="readouts"] dt').allTextContents()).includes('Last take: real-time factor')) fail('the RTF readout is not labelled as the last take\'s');
  const ttfa = await page.locator('[data-readout="ttfa"]').textContent();
  if (ttfa === '—') fail('time to first audio readout is empty');
  console.log(`e2e: readouts → RTF ${want}, TTFA ${ttfa}, memory used ${used} (${stats.memory.device})`);

  // Seek: a click on the waveform plays from there, a drag from where it
  // is let go; the playhead (data-position) follows.
  const canvas = page.locator('[data-region="waveform"] canvas');
  const duration = samples / 44100;
  const box = await canvas.boundingBox();
  // The first position reported after the seek (polled every 250 ms).
  const playingFrom = async (fraction, how) => {
    let at = NaN;
    for (const end = Date.now() + 5000; Date.now() < end; await page.waitForTimeout(20)) {
      if (!(await page.locator('[data-region="transport"] [data-player="playing"]').count())) continue;
      at = Number((await canvas.getAttribute('data-position')) || NaN);
      if (at >= fraction * duration - 0.05 && at <= fraction * duration + 0.6) return at;
    }
    fail(`${how} at ${fraction}: playing from ${at} s of ${duration} s`);
  };
  // Nothing plays before the click (the live take has ended).
  await page.locator('[data-region="transport"] [data-player="stopped"]').waitFor({ timeout: 10_000 });
  await canvas.click({ position: { x: box.width * 0.5, y: box.height / 2 } });
  const clicked = await playingFrom(0.5, 'click');
  await page.mouse.move(box.x + box.width * 0.1, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2, { steps: 4 });
  await page.mouse.move(box.x + box.width * 0.75, box.y + box.height / 2, { steps: 4 });
  await page.mouse.up();
  const dragged = await playingFrom(0.75, 'drag');
  // Sharp on HiDPI: at devicePixelRatio 2 the canvas has two pixels per CSS
  // pixel. (The emulated change comes with a resize: Chromium's emulation
  // fires no resolution media-query change, which a real screen change does.)
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setDeviceMetricsOverride', { width: 1200, height: 800, deviceScaleFactor: 2, mobile: false });
  await page.locator('[data-region="waveform"] canvas[data-dpr="2"]').waitFor({ timeout: 10_000 });
  const px = await canvas.evaluate((c) => [c.width, c.clientWidth]);
  if (px[0] !== 2 * px[1]) fail(`waveform canvas ${px[0]} px for ${px[1]} CSS px at devicePixelRatio 2`);
  await cdp.send('Emulation.clearDeviceMetricsOverride');
  await page.locator('[data-region="waveform"] canvas[data-dpr="1"]').waitFor({ timeout: 10_000 });
  await page.locator('[data-region="transport"] button').filter({ hasText: '■' }).click();
  console.log(`e2e: seek → click at 50% played from ${clicked.toFixed(2)} s, drag to 75% from ${dragged.toFixed(2)} s (of ${duration.toFixed(2)} s); canvas ${px[0]} px for ${px[1]} CSS px at devicePixelRatio 2`);

  // Export the take as WAV: in the browser it is a download through the
  // browser itself (the server writes no file anywhere).
  const music = join(scratch, 'music');
  const wavPath = join(scratch, 'take-1.wav');
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 10_000 }),
    page.locator('[data-region="takes"] li[data-take="1"] button').filter({ hasText: 'Export…' }).click(),
  ]);
  if (download.suggestedFilename() !== 'proscenium-take-1.wav') fail(`download named ${download.suggestedFilename()}`);
  await download.saveAs(wavPath);
  const exportNotice = page.locator('[data-region="status"] .info').filter({ hasText: 'exported take #1 as a download' });
  await exportNotice.first().waitFor({ timeout: 10_000 });
  if ((await exportNotice.count()) !== 1) fail(`${await exportNotice.count()} notices for one export`);
  const exportedAt = Date.now();
  const wav = readFileSync(wavPath);
  if (wav.toString('latin1', 0, 4) !== 'RIFF' || wav.toString('latin1', 8, 12) !== 'WAVE') fail('export is not a WAV file');
  if (wav.readUInt16LE(20) !== 1 || wav.readUInt16LE(22) !== 1 || wav.readUInt32LE(24) !== 44100 || wav.readUInt16LE(34) !== 16) fail('export is not 16-bit mono 44.1 kHz PCM');
  if (wav.length !== 44 + 2 * samples || wav.readUInt32LE(40) !== 2 * samples) fail(`export is ${wav.length} bytes, want ${44 + 2 * samples}`);
  // Each sample is the take's PCM rounded to 16 bits.
  const pcm = await page.evaluate(async () => Array.from(new Float32Array(await (await fetch('/api/takes/1/pcm')).arrayBuffer())));
  for (let i = 0; i < samples; i++) {
    const want16 = Math.round(Math.max(-1, Math.min(1, pcm[i])) * 32767);
    if (Math.abs(wav.readInt16LE(44 + 2 * i) - want16) > 0) fail(`export sample ${i}: ${wav.readInt16LE(44 + 2 * i)}, want ${want16}`);
  }
  if (existsSync(music) && readdirSync(music).length) fail(`the server wrote into ${music}: ${readdirSync(music)}`);
  // A path export (the desktop window's) never replaces a file unasked.
  const notes = join(scratch, 'notes.txt');
  writeFileSync(notes, 'my notes');
  const refused = await page.evaluate(
    async (path) => (await fetch('/api/ExportTake', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify([{ id: 1, path, format: 'wav-pcm16', overwrite: false }]) })).status,
    notes,
  );
  if (refused !== 409 || readFileSync(notes, 'utf8') !== 'my notes') fail(`export over an existing file: HTTP ${refused}`);
  console.log(`e2e: exported take #1 as a download (${wav.length} bytes, samples match the take); a path export over a file is refused`);

  // Re-run take 1 with one setting changed, rename it, replay it, switch
  // A/B between the two takes, delete the re-run.
  const take1 = page.locator('[data-region="takes"] li[data-take="1"]');
  // Re-run with a value that is not a number is refused, never run as 0.
  for (const [setting, typed, reason] of [['seed', 'abc', '"abc" is not a number'], ['temperature', '0,7', 'use a decimal point: 0.7']]) {
    await take1.getByRole('combobox', { name: 'Re-run changing' }).selectOption(setting);
    await take1.getByRole('textbox', { name: 'New value' }).fill(typed);
    await take1.getByRole('button', { name: 'Re-run' }).click();
    // The refusal's message is the answer to this click: no take may follow it.
    await take1.locator('[data-problem="rerun"]').filter({ hasText: `${setting}: ${reason}` }).waitFor();
    if ((await api(page, 'Takes')).length !== 1 || (await page.locator('[data-region="takes"] li[data-take]').count()) !== 1) fail(`a Re-run refused for ${setting} "${typed}" made a take`);
  }
  console.log('e2e: Re-run with "abc" and "0,7" refused next to the field; no take made');
  await take1.getByRole('combobox', { name: 'Re-run changing' }).selectOption('seed');
  await take1.getByRole('textbox', { name: 'New value' }).fill('7');
  await take1.getByRole('button', { name: 'Re-run' }).click();
  const take2 = page.locator('[data-region="takes"] li[data-take="2"][data-state="finished"]');
  await take2.waitFor({ timeout: 120_000 });
  const t2 = (await api(page, 'Takes')).find((t) => t.id === 2);
  if (t2.request.seed !== 7 || t2.request.text !== (await api(page, 'Takes')).find((t) => t.id === 1).request.text || !t2.name.includes('seed 7'))
    fail(`re-run take: ${JSON.stringify(t2.request)} named ${t2.name}`);
  await page.locator('[data-region="takes"] li[data-take="1"] button[aria-label="Select take 1"]').click();
  page.once('dialog', (d) => d.accept('Opening line'));
  await take1.getByRole('button', { name: 'Rename' }).click();
  await take1.locator('em').filter({ hasText: 'Opening line' }).waitFor();
  await take1.getByRole('button', { name: 'Play', exact: true }).click();
  await page.locator('[data-region="transport"] [data-player="playing"]').waitFor({ timeout: 10_000 });
  await take1.getByRole('combobox', { name: 'A/B with' }).selectOption('2');
  await take1.getByRole('button', { name: 'Switch A/B' }).click();
  await page.locator('[data-region="waveform"] h2').filter({ hasText: 'take #2' }).waitFor({ timeout: 10_000 });
  await page.locator('[data-region="transport"] [data-player="playing"]').waitFor({ timeout: 10_000 });
  // Delete asks first; "Keep" keeps the take.
  const take2Row = page.locator('[data-region="takes"] li[data-take="2"]');
  await take2Row.getByRole('button', { name: 'Delete', exact: true }).click();
  await take2Row.getByRole('alertdialog', { name: 'Confirm delete' }).waitFor();
  await take2Row.getByRole('button', { name: 'Keep' }).click();
  await take2Row.getByRole('alertdialog', { name: 'Confirm delete' }).waitFor({ state: 'detached' });
  if (!(await api(page, 'Takes')).some((t) => t.id === 2) || !existsSync(join(scratch, 'data', 'proscenium', 'takes', '2'))) fail('Delete removed take 2 before it was confirmed');
  await take2Row.getByRole('button', { name: 'Delete', exact: true }).click();
  await take2Row.getByRole('button', { name: 'Delete for good' }).click();
  await take2Row.waitFor({ state: 'detached', timeout: 10_000 });
  if (existsSync(join(scratch, 'data', 'proscenium', 'takes', '2'))) fail('deleted take 2 is still on disk');
  const renamed = JSON.parse(readFileSync(join(scratch, 'data', 'proscenium', 'takes', '1', 'take.json'), 'utf8'));
  if (renamed.take.name !== 'Opening line') fail(`take.json name ${renamed.take.name}`);
  console.log(`e2e: re-run with seed 7 → take #2 (${t2.name}); renamed #1, played it, switched A/B to #2, deleted #2 once confirmed`);

  // Esc stops a running take; the audio so far is kept (finish "cancel").
  await page.locator('[data-region="takes"] button[aria-label="Select take 1"]').click();
  await take1.getByRole('combobox', { name: 'Re-run changing' }).selectOption('max_frames');
  await take1.getByRole('textbox', { name: 'New value' }).fill('4000');
  await take1.getByRole('button', { name: 'Re-run' }).click();
  const take3 = page.locator('[data-region="takes"] li[data-take="3"]');
  await take3.and(page.locator('[data-state="running"]')).waitFor({ timeout: 10_000 });
  await page.waitForTimeout(300);
  await page.keyboard.press('Escape');
  await page.locator('[data-region="transport"] output[data-answer="ok"]').filter({ hasText: 'stopped; the audio so far is kept' }).waitFor({ timeout: 10_000 });
  const t3 = (await api(page, 'Takes')).find((t) => t.id === 3);
  if (t3.state !== 'finished' || t3.finish.reason !== 'cancel' || t3.samples !== t3.finish.frames * 2048 || t3.frames >= 4000)
    fail(`take 3 after Esc: ${JSON.stringify({ state: t3.state, reason: t3.finish?.reason, frames: t3.frames, samples: t3.samples })}`);
  console.log(`e2e: Esc stopped take #3 after ${t3.frames} frames (cancel, audio kept)`);

  // The take was kept under XDG_DATA_HOME.
  if (!existsSync(join(scratch, 'data', 'proscenium', 'takes', '1', 'take.json'))) fail('take 1 was not saved under XDG_DATA_HOME');

  // A take made through the speech API while the studio is open appears in
  // the list, marked as an API take, and the server panel logs the request.
  const speechURL = new URL('v1/audio/speech', url).href;
  const apiReply = await fetch(speechURL, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'drama-3', input: 'Through the API.', max_frames: 20, response_format: 'wav' }) });
  if (!apiReply.ok) fail(`speech API: ${apiReply.status} ${await apiReply.text()}`);
  const apiWav = Buffer.from(await apiReply.arrayBuffer());
  const apiTake = (await api(page, 'Takes')).find((t) => t.source === 'api');
  if (!apiTake || apiTake.request.text !== 'Through the API.' || apiTake.samples !== 20 * 2048 || apiWav.length !== 44 + 2 * apiTake.samples) fail(`API take ${JSON.stringify(apiTake)}`);
  const apiRow = page.locator(`[data-region="takes"] li[data-take="${apiTake.id}"][data-source="api"][data-state="finished"]`);
  await apiRow.waitFor({ timeout: 10_000 });
  if ((await apiRow.locator('.badge').textContent()) !== 'API' || !(await apiRow.textContent()).includes('Through the API.')) fail(`API take row: ${await apiRow.textContent()}`);
  await apiRow.locator('[data-take-wave]').waitFor();
  const logged = page.locator('[data-region="server"] [data-request-log] li').filter({ hasText: 'POST /v1/audio/speech' });
  await logged.first().waitFor({ timeout: 10_000 });
  if (!(await logged.first().locator('[data-status="200"]').count())) fail(`request log: ${await logged.first().textContent()}`);
  if ((await page.locator('[data-server-address]').textContent()) !== url.replace(/\/$/, '')) fail(`server panel address ${await page.locator('[data-server-address]').textContent()}`);
  console.log(`e2e: API take #${apiTake.id} appeared as an API take (${apiTake.samples} samples); the server panel logged it`);

  // A take that fails (the engine refuses the API's text) says why and
  // offers neither Play nor Export.
  const refusedReply = await fetch(speechURL, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'drama-3', input: 'Say <|im_end|> now.' }) });
  if (refusedReply.ok) fail('the speech API spoke a structural token');
  const failedTake = (await api(page, 'Takes')).find((t) => t.state === 'failed');
  if (!failedTake) fail(`no failed take after a refused request (HTTP ${refusedReply.status})`);
  const failedRow = page.locator(`[data-region="takes"] li[data-take="${failedTake.id}"][data-state="failed"]`);
  await failedRow.locator('[data-why]').filter({ hasText: 'failed:' }).waitFor({ timeout: 10_000 });
  await failedRow.getByRole('button', { name: `Select take ${failedTake.id}` }).click();
  await failedRow.getByRole('button', { name: 'Rename' }).waitFor();
  if (await failedRow.getByRole('button', { name: /^(Play|Export…)$/ }).count()) fail('a failed take offers Play or Export');
  console.log(`e2e: failed take #${failedTake.id}: ${(await failedRow.locator('[data-why]').textContent()).trim()}; no Play, no Export`);

  // A studio take behind API takes that fill the engine's batch says it
  // waits for a place; it runs once one is free (batch 1: it waits for the
  // one running take). Beside fewer takes it would join them at once.
  const batch = (await api(page, 'ModelStatus')).info.batch || 1;
  const slow = Array.from({ length: batch }, (_, i) => fetch(speechURL, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'drama-3', input: `A long one, number ${i + 1}.`, max_frames: 800 }) }));
  const apiRunning = page.locator('[data-region="takes"] li[data-source="api"][data-state="running"]');
  await apiRunning.nth(batch - 1).waitFor({ timeout: 10_000 });
  const slowIds = (await apiRunning.evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-take'))))).sort((a, b) => a - b);
  await scriptBox.fill('Friends, Romans.');
  await page.getByRole('button', { name: 'Speak', exact: true }).click();
  const waiting = page.locator('[data-region="takes"] li[data-source="studio"][data-state="running"] [data-waiting]');
  const waitText = batch === 1 ? `waiting for take #${slowIds[0]} (from the API) to finish` : `waiting for a place: the batch of ${batch} runs takes ${slowIds.slice(0, batch).map((id) => `#${id}`).join(', ')}`;
  await waiting.filter({ hasText: waitText }).waitFor({ timeout: 10_000 });
  for (const r of slow) if (!(await r).ok) fail('a long API take failed');
  const behind = Number(await page.locator('[data-region="takes"] li[data-source="studio"]').first().getAttribute('data-take'));
  await page.locator(`[data-region="takes"] li[data-take="${behind}"][data-state="finished"]`).waitFor({ timeout: 120_000 });
  console.log(`e2e: studio take #${behind} waited for a place in the batch of ${batch} (API takes ${slowIds.join(', ')}), then ran`);

  // Copy as curl: the command for the current script and settings, run for real.
  await page.locator('[data-region="server"]').getByRole('button', { name: 'Copy as curl' }).click();
  const curlCmd = await page.getByRole('textbox', { name: 'curl command' }).inputValue();
  if (!curlCmd.includes('Friends, Romans.') || !curlCmd.includes('"temperature":0.65')) fail(`curl command: ${curlCmd}`);
  const before_curl = (await api(page, 'Takes')).length;
  execFileSync('bash', ['-c', curlCmd], { cwd: scratch, timeout: 120_000 });
  const curlWav = readFileSync(join(scratch, 'take.wav'));
  if (curlWav.toString('latin1', 0, 4) !== 'RIFF') fail('the curl command did not save a WAV');
  await page.locator(`[data-region="takes"] li[data-source="api"]`).nth(2).waitFor({ timeout: 10_000 });
  if ((await api(page, 'Takes')).length !== before_curl + 1) fail('the curl take is not in the list');
  console.log(`e2e: copy as curl → ${curlWav.length} bytes of WAV, and the take appeared`);

  // Space plays and pauses the selected take; Delete asks first (Esc keeps it).
  await page.locator('[data-region="takes"] button[aria-label="Select take 1"]').click();
  await page.locator('[data-region="transport"] [data-player="stopped"]').waitFor({ timeout: 10_000 });
  await page.locator('h1').click(); // away from any field
  await page.keyboard.press('Space');
  await page.locator('[data-region="transport"] [data-player="playing"]').waitFor({ timeout: 10_000 }).catch(async () => {
    fail(`Space: player ${await page.locator('[data-player]').getAttribute('data-player')}, focus on ${await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 80))}`);
  });
  await page.keyboard.press('Space');
  await page.locator('[data-region="transport"] [data-player="paused"]').waitFor({ timeout: 10_000 });
  await page.locator('[data-region="transport"] button').filter({ hasText: '■' }).click();
  await page.keyboard.press('Delete');
  await take1.getByRole('alertdialog', { name: 'Confirm delete' }).waitFor();
  await page.keyboard.press('Escape');
  await take1.getByRole('alertdialog', { name: 'Confirm delete' }).waitFor({ state: 'detached' });
  if (!(await api(page, 'Takes')).some((t) => t.id === 1)) fail('Delete then Esc removed take 1');
  console.log('e2e: Space played and paused take #1; Delete asked and Esc kept it');

  // Messages clear themselves.
  await exportNotice.first().waitFor({ state: 'detached', timeout: Math.max(1000, 12_000 - (Date.now() - exportedAt)) });

  // The server restarts: the page notices, reconnects and reads the state
  // again (the model loaded by the new process, the takes on disk).
  const port = new URL(url).port;
  // (The socket may have reconnected before, e.g. after lagging behind.)
  const resyncsBefore = Number(await page.locator('[data-connection]').getAttribute('data-resyncs'));
  const gone = new Promise((r) => server.once('exit', r));
  server.kill('SIGTERM');
  await gone;
  await page.locator('[data-connection="lost"]').waitFor({ timeout: 10_000 });
  await startServer(Number(port), ['--model', demoDir]);
  await page.locator(`[data-connection="connected"][data-resyncs="${resyncsBefore + 1}"]`).waitFor({ timeout: 20_000 }).catch(async () => {
    fail(`after the restart: ${await page.locator('[data-connection]').evaluate((e) => e.outerHTML)}`);
  });
  await page.locator('[data-region="model"] [data-state="loaded"]').waitFor({ timeout: 20_000 });
  const afterRestart = (await api(page, 'Takes')).map((t) => t.id);
  for (const id of afterRestart) await page.locator(`[data-region="takes"] li[data-take="${id}"]`).waitFor({ timeout: 10_000 });
  if ((await page.locator('[data-region="takes"] li').count()) !== afterRestart.length) fail('the takes list after the restart differs from the service');
  console.log(`e2e: server restarted; the page resynchronised (model loaded, ${afterRestart.length} takes)`);

  // Layout: nothing wider than the window at any size; at 1280×800 the
  // page does not scroll and the script, Speak/Stop and the waveform are
  // in view. A long API take runs meanwhile (the live take in view).
  await scriptBox.fill('<|speaker:1|>[slowly, to the crowd] Friends, Romans, countrymen, <shout>lend me your ears</shout>;\nI come to bury Caesar, not to praise him.');
  const live = fetch(speechURL, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'drama-3', input: "Friends, Romans, countrymen, lend me your ears;\nI come to bury Caesar, not to praise him. The evil that men do lives after them; the good is oft interred with their bones.", max_frames: 1500 }) });
  await page.locator('[data-region="takes"] li[data-source="api"][data-state="running"] [data-waiting]').filter({ hasText: /making audio: \d{3,} frames/ }).waitFor({ timeout: 30_000 }).catch(() => {});
  await page.evaluate(() => document.querySelectorAll('.side, .takes ol').forEach((e) => (e.scrollTop = 0)));
  for (const [w, hgt] of [[800, 900], [1280, 660], [1024, 768], [1280, 800], [1920, 1080]]) {
    await page.setViewportSize({ width: w, height: hgt });
    await page.waitForTimeout(200);
    const m = await page.evaluate(() => {
      const over = [...document.querySelectorAll('.panel, .panel *')].filter((e) => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible' && e.clientWidth > 0).map((e) => `${e.tagName}.${e.className}`);
      const inView = (sel) => {
        const r = document.querySelector(sel).getBoundingClientRect();
        return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && r.height > 0;
      };
      const box = (sel) => document.querySelector(sel).getBoundingClientRect();
      // Panels never overlap and the editor stays inside its panel.
      const stacked =
        box('[data-region="script"] .editor').bottom <= box('[data-region="script"]').bottom &&
        box('[data-region="script"]').bottom <= box('[data-region="transport"]').top &&
        box('[data-region="transport"]').bottom <= box('[data-region="waveform"]').top;
      const main = document.querySelector('main');
      return {
        stacked,
        clipped: getComputedStyle(main).overflowY === 'hidden' && main.scrollHeight > main.clientHeight + 1,
        sw: document.documentElement.scrollWidth,
        sh: document.documentElement.scrollHeight,
        over: over.slice(0, 5),
        script: inView('[data-region="script"] textarea'),
        speak: inView('[data-region="transport"] button.speak'),
        stop: inView('[data-region="transport"] button.stop'),
        wave: inView('[data-region="waveform"] canvas'),
      };
    });
    if (m.sw > w || m.over.length || !m.stacked || m.clipped) fail(`at ${w} px the page is ${m.sw} px wide; overflowing: ${m.over}; panels stacked without overlap: ${m.stacked}; clipped: ${m.clipped}`);
    if (w >= 1280 && hgt >= 720 && (m.sh > hgt || !m.script || !m.speak || !m.stop || !m.wave)) fail(`at ${w}×${hgt}: ${JSON.stringify(m)}`);
    console.log(`e2e: layout at ${w}×${hgt}: ${JSON.stringify(m)}`);
    if (process.env.SCREENSHOTS && [800, 1280, 1920].includes(w) && hgt >= 720) {
      await page.evaluate(() => document.querySelectorAll('.side, .takes ol').forEach((e) => (e.scrollTop = 0)));
      const file = join(process.env.SCREENSHOTS, `browser-${w}.png`);
      await page.screenshot({ path: file, fullPage: w < 1000 });
      console.log(`e2e: saved ${file}`);
    }
  }
  if (!(await live).ok) fail('the long API take failed');
  await page.setViewportSize({ width: 1280, height: 800 });

  // A voice cloned from a file in the Cast panel: kept in the voice library
  // under XDG_DATA_HOME, cast for speaker 0, spoken by a studio take (which
  // remembers it) and through the speech API by name; POST /v1/audio/voices
  // makes another from a multipart upload.
  const castPanel = page.locator('[data-region="cast"]');
  const refFile = join(process.cwd(), '..', 'engine', 'audio', 'decode', 'testdata', 'ref.flac');
  await castPanel.locator('input[name="clone_file"]').setInputFiles(refFile);
  await castPanel.locator('input[name="clone_name"]').fill('Ada');
  await castPanel.locator('textarea[name="clone_transcript"]').fill('The quick brown fox.');
  await castPanel.getByRole('button', { name: 'Create voice' }).click();
  await castPanel.locator('[role="status"]').filter({ hasText: 'voice "Ada" made from ref.flac' }).waitFor({ timeout: 30_000 });
  const libDir = join(scratch, 'data', 'proscenium', 'voices');
  const entries = existsSync(libDir) ? readdirSync(libDir).filter((d) => /^[0-9a-f]{64}$/.test(d)) : [];
  if (entries.length !== 1 || !existsSync(join(libDir, entries[0], 'codes.npy')) || !existsSync(join(libDir, entries[0], 'reference.flac')))
    fail(`voice library under XDG_DATA_HOME: ${JSON.stringify(entries)}`);
  const castChip = page.locator('[data-region="castchips"] select[name="cast_0"]');
  if ((await castChip.inputValue()) !== 'Ada') fail('the new voice is not cast for speaker 0');
  await scriptBox.fill('In a cloned voice.');
  const castId = Math.max(...(await api(page, 'Takes')).map((t) => t.id)) + 1;
  await page.getByRole('button', { name: 'Speak', exact: true }).click();
  await page.locator(`[data-region="takes"] li[data-take="${castId}"][data-state="finished"]`).waitFor({ timeout: 120_000 });
  const castTake = (await api(page, 'Takes')).find((t) => t.id === castId);
  if (JSON.stringify(castTake.voices) !== '["Ada"]' || castTake.request.references?.length !== 1 || castTake.request.references[0].transcript !== 'The quick brown fox.')
    fail(`cast take: ${JSON.stringify({ voices: castTake.voices, refs: castTake.request.references?.length })}`);
  await castChip.selectOption('');
  const cloned = await fetch(speechURL, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'drama-3', voice: 'Ada', input: 'Through the API, cloned.', max_frames: 10, response_format: 'wav' }) });
  if (!cloned.ok || cloned.headers.get('x-voice') !== 'Ada') fail(`speech API with a cloned voice: ${cloned.status} ${await cloned.text()}`);
  await cloned.arrayBuffer();
  const apiCast = (await api(page, 'Takes')).filter((t) => t.source === 'api').sort((a, b) => b.id - a.id)[0];
  if (apiCast.request.references?.length !== 1) fail(`API take with voice Ada has ${apiCast.request.references?.length} references`);
  const form = new FormData();
  form.set('name', 'Bea');
  form.set('transcript', 'The quick brown fox.');
  form.set('audio', new Blob([readFileSync(refFile)]), 'ref.flac');
  const made = await fetch(new URL('v1/audio/voices', url).href, { method: 'POST', body: form });
  const madeBody = await made.json();
  if (made.status !== 201 || madeBody.id !== 'Bea' || madeBody.reference !== true) fail(`POST /v1/audio/voices: ${made.status} ${JSON.stringify(madeBody)}`);
  console.log(`e2e: voice "Ada" cloned from ref.flac in the Cast panel (library ${entries[0].slice(0, 8)}…), take #${castId} spoke in it and kept it; the API spoke it by name; POST /v1/audio/voices made "Bea"`);

  // Lowering the takes limit below what is stored says which takes would go
  // and removes nothing until confirmed. A 150-frame take (1.2 MB) passes
  // a limit of 0.001 GiB (1 MiB and a bit).
  await page.locator('[data-region="takes"] button[aria-label="Select take 1"]').click();
  await take1.getByRole('combobox', { name: 'Re-run changing' }).selectOption('max_frames');
  await take1.getByRole('textbox', { name: 'New value' }).fill('150');
  const rerunId = Math.max(...(await api(page, 'Takes')).map((t) => t.id)) + 1;
  await take1.getByRole('button', { name: 'Re-run' }).click();
  await page.locator(`[data-region="takes"] li[data-take="${rerunId}"][data-state="finished"]`).waitFor({ timeout: 120_000 });
  const storedIds = async () => (await api(page, 'Takes')).filter((t) => t.stored).map((t) => t.id).sort();
  const before = await storedIds();
  const confirmLimit = page.locator('[data-region="studio-settings"] [data-confirm="takes-limit"]');
  await limit.fill('0.001');
  await limit.press('Tab');
  await confirmLimit.waitFor({ timeout: 10_000 });
  const asked = (await confirmLimit.textContent()).replace(/\s+/g, ' ');
  if (!asked.includes('#1')) fail(`the confirmation does not name take #1: ${asked}`);
  await confirmLimit.getByRole('button', { name: 'Keep the takes' }).click();
  await confirmLimit.waitFor({ state: 'detached' });
  if (JSON.stringify(await storedIds()) !== JSON.stringify(before) || (await api(page, 'Settings')).takes_limit_bytes !== 1 << 30 || (await limit.inputValue()) !== '1')
    fail(`"Keep the takes" changed something: takes ${await storedIds()}, limit ${(await api(page, 'Settings')).takes_limit_bytes}`);
  await limit.fill('0.001');
  await limit.press('Tab');
  await confirmLimit.getByRole('button', { name: 'Remove and apply' }).click();
  await page.locator('[data-region="studio-settings"] [role="status"]').filter({ hasText: 'saved' }).waitFor({ timeout: 10_000 });
  await take1.waitFor({ state: 'detached', timeout: 10_000 });
  const after = await storedIds();
  const st = await api(page, 'Studio');
  if (after.includes(1) || existsSync(join(scratch, 'data', 'proscenium', 'takes', '1')) || st.takes_bytes > st.takes_limit_bytes || st.takes_limit_bytes !== Math.round(0.001 * 2 ** 30))
    fail(`after confirming the limit: takes ${after}, ${st.takes_bytes} bytes of ${st.takes_limit_bytes}`);
  console.log(`e2e: lowering the takes limit asked first ("${asked.trim()}"); kept on "Keep", applied on confirm: stored takes ${before} → ${after}`);

  if (pageErrors.length) fail(`page errors: ${pageErrors.join('; ')}`);
  console.log('e2e: PASS');
}

/** Calls a service method the way the page does. */
function api(page, method, args = []) {
  return page.evaluate(
    async ([m, a]) => (await fetch(`/api/${m}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(a) })).json(),
    [method, args],
  );
}

let code = 0;
try {
  await main();
} catch (e) {
  console.error(`e2e: FAIL: ${e.stack || e}`);
  code = 1;
} finally {
  await context?.close().catch(() => {});
  server?.kill('SIGTERM');
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(code);
