// Browser test: Debian's Chromium (driven by playwright-core, no downloaded
// browsers) loads the studio UI from `proscenium serve --ui` on 127.0.0.1,
// types a script, changes a sampling setting, presses Speak and checks what
// the Go service answered: first with no model ("no model loaded"), then
// with the demo checkpoint of `proscenium make-tiny` loaded through the
// model panel (a finished take, real figures in the readouts).
//
//   node e2e/speak.e2e.mjs PATH/TO/proscenium
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
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
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(url);
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

  // Load the demo checkpoint through the model panel and speak a short take.
  const tiny = join(scratch, 'tiny');
  execFileSync(cli, ['make-tiny', tiny], { stdio: 'inherit' });
  await page.getByRole('textbox', { name: 'Checkpoint directory' }).fill(tiny);
  await page.locator('[data-region="model"]').getByRole('button', { name: 'Load', exact: true }).click();
  await page.locator('[data-region="model"] [data-state="loaded"]').waitFor({ timeout: 60_000 });
  const loaded = await page.locator('[data-region="model"] [role="status"]').textContent();
  if (!loaded.includes('demo model')) fail(`model status after loading the demo: ${loaded}`);
  console.log(`e2e: Load → ${loaded.trim()}`);

  const maxFrames = page.locator('[data-region="sampling"] input[name="max_frames"]');
  await maxFrames.fill('12');
  await maxFrames.press('Tab');
  await page.locator('[data-region="sampling"] [role="status"]').filter({ hasText: 'saved' }).waitFor();
  await page.getByRole('button', { name: 'Speak', exact: true }).click();
  await page.locator('[data-region="transport"] output[data-answer="ok"]').filter({ hasText: 'take #1 started' }).waitFor();
  const take = page.locator('[data-region="takes"] li[data-state="finished"]');
  await take.waitFor({ timeout: 120_000 });
  const takeText = await take.textContent();
  if (!/12 frames, length/.test(takeText) || !takeText.includes('T 0.65')) fail(`finished take: ${takeText}`);
  console.log(`e2e: take → ${takeText.replace(/\s+/g, ' ').trim()}`);

  // The readouts now show the service's figures, the same it answers directly.
  const stats = await page.evaluate(async () => {
    const r = await fetch('/api/Stats', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[]' });
    return r.json();
  });
  const want = stats.last_take.real_time_factor.toFixed(3);
  await page.locator('[data-readout="rtf"]').filter({ hasText: want }).waitFor({ timeout: 10_000 });
  const used = await page.locator('[data-readout="used"]').textContent();
  if (used === '—' || !stats.memory || stats.memory.used <= 0) fail(`memory readout ${used}, service memory ${JSON.stringify(stats.memory)}`);
  console.log(`e2e: readouts → RTF ${want}, memory used ${used} (${stats.memory.device})`);

  if (pageErrors.length) fail(`page errors: ${pageErrors.join('; ')}`);
  console.log('e2e: PASS');
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
