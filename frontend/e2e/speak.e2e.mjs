// Browser test: Debian's Chromium (driven by playwright-core, no downloaded
// browsers) loads the studio UI from `proscenium serve --ui` on 127.0.0.1,
// types a script, changes a sampling setting, presses Speak and checks what
// the Go service answered: first with no model ("no model loaded"), then
// with the demo checkpoint loaded through the model panel's "Use the demo
// model" (load progress, inspect's summary), a take whose waveform and
// streamed PCM arrive as it is made, real figures in the readouts, a WAV
// export (a browser download) checked byte by byte against the take's PCM,
// Delete and a lower takes limit that remove nothing until confirmed, and
// the security headers every response carries.
//
//   node e2e/speak.e2e.mjs PATH/TO/proscenium
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

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
function startServer() {
  return new Promise((resolve, reject) => {
    server = spawn(cli, ['serve', '--ui', '--host', '127.0.0.1', '--port', '0', '--settings', settingsFile], {
      stdio: ['ignore', 'pipe', 'inherit'],
      // Takes, the demo model and exports go under the scratch directory.
      env: { ...process.env, XDG_DATA_HOME: join(scratch, 'data'), XDG_CONFIG_HOME: join(scratch, 'config'), XDG_MUSIC_DIR: join(scratch, 'music'), HF_HOME: join(scratch, 'hf'), HF_HUB_CACHE: '' },
    });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server printed no URL in 20 s: ${out}`)), 20_000);
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (m) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    });
    server.on('exit', (code) => reject(new Error(`server exited (${code}) before printing its URL: ${out}`)));
  });
}

async function main() {
  const url = await startServer();
  console.log(`e2e: server at ${url}`);
  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
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

  for (const r of ['script', 'sampling', 'model', 'readouts', 'transport', 'takes']) {
    await page.locator(`[data-region="${r}"]`).waitFor({ timeout: 10_000 });
  }
  // The model panel and readouts show the service's state, not numbers.
  await page.locator('[data-region="model"] [role="status"]').filter({ hasText: 'no model loaded' }).waitFor();
  const rtf = await page.locator('[data-readout="rtf"]').textContent();
  if (rtf !== '—') fail(`real-time factor readout without a model: ${rtf}`);

  // Type a script and change a sampling setting.
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
  await page.locator('[data-region="sampling"] .error').filter({ hasText: 'top_p must be in (0, 1]' }).waitFor();
  await topP.fill('0.9');
  await topP.press('Tab');
  await page.locator('[data-region="sampling"] [role="status"]').filter({ hasText: 'saved' }).waitFor();

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

  // Speak: the service has no model and says so.
  await page.getByRole('button', { name: 'Speak', exact: true }).click();
  const answer = page.locator('[data-region="transport"] output[data-answer="error"]');
  await answer.waitFor({ timeout: 10_000 });
  const said = (await answer.textContent()).trim();
  if (said !== 'no model loaded') fail(`Speak answered ${JSON.stringify(said)}, want "no model loaded"`);
  console.log(`e2e: Speak → service answered: ${said}`);

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

  // The demo model through the model panel: written under XDG_DATA_HOME,
  // inspected (the memory it needs) before loading, then loaded.
  const modelPanel = page.locator('[data-region="model"]');
  await modelPanel.locator('[data-no-checkpoint]').waitFor({ timeout: 10_000 }); // offered with the demo
  await modelPanel.getByRole('button', { name: 'Use the demo model' }).click();
  await modelPanel.locator('[data-memory-needed]').waitFor({ timeout: 60_000 });
  const demoDir = await page.getByRole('textbox', { name: 'Checkpoint directory' }).inputValue();
  if (demoDir !== join(scratch, 'data', 'proscenium', 'demo-model')) fail(`demo model at ${demoDir}`);
  const needed = await modelPanel.locator('[data-memory-needed]').textContent();
  if (!/\d/.test(needed)) fail(`memory needed: ${needed}`);
  console.log(`e2e: demo model written to ${demoDir}; inspect says it needs ${needed}`);
  await modelPanel.getByRole('button', { name: 'Load', exact: true }).click();
  await page.locator('[data-region="model"] [data-state="loaded"]').waitFor({ timeout: 60_000 });
  const loaded = await page.locator('[data-region="model"] [role="status"]').textContent();
  if (!loaded.includes('demo model')) fail(`model status after loading the demo: ${loaded}`);
  const progress = await api(page, 'LoadStatus');
  if (!progress.done || progress.total <= 0 || progress.read !== progress.total) fail(`load progress ${JSON.stringify(progress)}`);
  console.log(`e2e: Load → ${loaded.trim()}; progress ${progress.read} of ${progress.total} bytes`);

  const frames = 40;
  const maxFrames = page.locator('[data-region="sampling"] input[name="max_frames"]');
  await maxFrames.fill(String(frames));
  await maxFrames.press('Tab');
  await page.locator('[data-region="sampling"] [role="status"]').filter({ hasText: 'saved' }).waitFor();
  // The token count comes from the loaded model's tokenizer.
  await page.getByRole('textbox', { name: 'Script' }).fill('<|speaker:1|>[softly] Friends, <whisper>Romans</whisper>.');
  await page.locator('[data-region="script"] [data-count]').filter({ hasText: /\d+ tokens/ }).waitFor({ timeout: 10_000 });
  await page.locator('[data-region="script"] .overlay .tag').first().waitFor();

  // Speak with the keyboard shortcut; watch the take while it runs.
  await page.getByRole('textbox', { name: 'Script' }).press('Control+Enter');
  await page.locator('[data-region="transport"] output[data-answer="ok"]').filter({ hasText: 'take #1 started' }).waitFor();
  const seen = { running: false, fps: false, growing: false };
  const take = page.locator('[data-region="takes"] li[data-state="finished"]');
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
    if (await take.count()) break;
    if (await page.locator('[data-region="takes"] li[data-state="running"]').count()) seen.running = true;
    const fps = await page.locator('[data-readout="fps"]').textContent();
    if (fps !== '—') seen.fps = true;
    const b = Number(await page.locator('[data-region="waveform"] canvas').getAttribute('data-buckets'));
    if (b > 0 && b < (frames * 2048) / 512) seen.growing = true;
    await page.waitForTimeout(30);
  }
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
  if (used === '—' || !stats.memory || stats.memory.used <= 0) fail(`memory readout ${used}, service memory ${JSON.stringify(stats.memory)}`);
  const ttfa = await page.locator('[data-readout="ttfa"]').textContent();
  if (ttfa === '—') fail('time to first audio readout is empty');
  console.log(`e2e: readouts → RTF ${want}, TTFA ${ttfa}, memory used ${used} (${stats.memory.device})`);

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
  await page.locator('[data-region="status"] .info').filter({ hasText: 'exported take #1 as a download' }).first().waitFor({ timeout: 10_000 });
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
  await page.waitForTimeout(200);
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

  // Lowering the takes limit below what is stored says which takes would go
  // and removes nothing until confirmed. A 150-frame take (1.2 MB) passes
  // a limit of 0.001 GiB (1 MiB and a bit).
  await page.locator('[data-region="takes"] button[aria-label="Select take 1"]').click();
  await take1.getByRole('combobox', { name: 'Re-run changing' }).selectOption('max_frames');
  await take1.getByRole('textbox', { name: 'New value' }).fill('150');
  await take1.getByRole('button', { name: 'Re-run' }).click();
  await page.locator('[data-region="takes"] li[data-take="4"][data-state="finished"]').waitFor({ timeout: 120_000 });
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
  if (after.includes(1) || existsSync(join(scratch, 'data', 'proscenium', 'takes', '1')) || st.takes_bytes > st.takes_limit || st.takes_limit !== Math.round(0.001 * 2 ** 30))
    fail(`after confirming the limit: takes ${after}, ${st.takes_bytes} bytes of ${st.takes_limit}`);
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
