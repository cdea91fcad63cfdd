// Browser test of Speak ×N (issue 30): Debian's Chromium (playwright-core)
// loads the studio UI from `proscenium serve --ui --model DEMO` (a make-tiny
// checkpoint, the CPU backend, four takes together), types a script,
// presses Speak ×4 and sees four rows appear at once and stream (each row
// gets samples before the first of them finishes), then all four finish,
// named by their seeds, grouped, each with its own waveform; a temperature
// sweep with a value that is no number is refused before any take starts.
//
//   node e2e/variations.e2e.mjs PATH/TO/proscenium
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { scratchEnv, studioURL } from './studio-server.mjs';

const cli = process.argv[2];
if (!cli) {
  console.error('usage: node e2e/variations.e2e.mjs PATH/TO/proscenium');
  process.exit(2);
}
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const scratch = mkdtempSync(join(tmpdir(), 'proscenium-e2e-variations-'));
let server;
let context;

function fail(msg) {
  throw new Error(msg);
}

/** Starts the server on the demo checkpoint and resolves with its URL. */
function startServer(model) {
  server = spawn(cli, ['serve', '--ui', '--host', '127.0.0.1', '--port', '0', '--backend', 'cpu', '--batch', '4',
    '--model', model, '--settings', join(scratch, 'settings.json')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: scratchEnv(scratch),
  });
  return studioURL(server, 60);
}

/** The takes the service lists (POST /api/Takes), newest first. */
async function takesNow(page) {
  return page.evaluate(async () => {
    const r = await fetch('/api/Takes', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[]' });
    return r.json();
  });
}

async function main() {
  const model = join(scratch, 'demo');
  execFileSync(cli, ['make-tiny', model], { stdio: 'inherit' });
  const url = await startServer(model);
  console.log(`e2e variations: server at ${url}`);
  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(url);
  await page.locator('[data-connection="connected"]').waitFor({ timeout: 20_000 });
  await page.locator('[data-region="model"] [role="status"]').filter({ hasText: 'loaded' }).waitFor({ timeout: 60_000 });

  // The first project's settings are applied (the sampling fields made from
  // them) before a field is edited: an edit during the switch would land in
  // fields about to be made afresh.
  await page.locator('[data-region="sampling"][data-project="Untitled"]').waitFor();
  await page.getByRole('textbox', { name: 'Script' }).fill('Four takes of one line, made together.');
  // Short takes: the demo model's random weights rarely end their speech.
  const maxFrames = page.locator('[data-region="sampling"] input[name="max_frames"]');
  await maxFrames.fill('40');
  await maxFrames.press('Tab');
  await page.locator('[data-region="sampling"] [role="status"]').filter({ hasText: 'saved' }).waitFor();
  const transport = page.locator('[data-region="transport"]');

  // A sweep whose values are not numbers starts nothing.
  await transport.getByRole('combobox', { name: 'What varies' }).selectOption('temperature');
  await transport.getByRole('textbox', { name: 'Values, one per take' }).fill('0.5, warm');
  await transport.getByRole('button', { name: 'Speak ×4' }).click();
  await transport.locator('output[data-answer="error"]').filter({ hasText: 'the values must be numbers' }).waitFor();
  if ((await takesNow(page)).length !== 0) fail('a refused sweep started takes');

  // Speak ×4 by seed: four rows at once, each streaming into its own row.
  await transport.getByRole('combobox', { name: 'What varies' }).selectOption('seed');
  await transport.getByRole('button', { name: 'Speak ×4' }).click();
  await transport.locator('output[data-answer="ok"]').filter({ hasText: 'started together' }).waitFor();
  const rows = page.locator('[data-region="takes"] li[data-take]');
  await rows.nth(3).waitFor({ timeout: 10_000 });
  if ((await rows.count()) !== 4) fail(`${await rows.count()} rows after Speak ×4`);

  // Every take has audio before the first of them finishes: the service's
  // list, polled, never shows a finished take while another has no samples.
  let streamedTogether = false;
  for (let i = 0; i < 600; i++) {
    const list = await takesNow(page);
    const finished = list.filter((t) => t.state === 'finished').length;
    if (list.length === 4 && list.every((t) => t.samples > 0) && finished === 0) streamedTogether = true;
    if (finished > 0 && !streamedTogether && list.some((t) => t.samples === 0)) fail(`a take finished while another had no audio: ${JSON.stringify(list.map((t) => [t.id, t.state, t.samples]))}`);
    if (finished === 4) break;
    await page.waitForTimeout(100);
  }
  await page.locator('[data-region="takes"] li[data-state="finished"]').nth(3).waitFor({ timeout: 120_000 });
  const list = await takesNow(page);
  const group = Math.min(...list.map((t) => t.id));
  const seeds = list.map((t) => t.request.seed).sort((a, b) => a - b);
  if (list.some((t) => t.group !== group || !t.name.startsWith('×4 · seed ') || t.finish?.frames <= 0)) fail(`takes after Speak ×4: ${JSON.stringify(list.map((t) => [t.id, t.group, t.name, t.state]))}`);
  if (new Set(seeds).size !== 4 || seeds[3] - seeds[0] !== 3) fail(`seeds ${seeds}`);
  for (let i = 0; i < 4; i++) {
    const row = rows.nth(i);
    if (!(await row.textContent()).includes('×4 · seed')) fail(`row ${i}: ${await row.textContent()}`);
    if ((await row.locator('svg, canvas').count()) === 0) fail(`row ${i} has no waveform`);
  }
  if (pageErrors.length) fail(`page errors: ${pageErrors.join('; ')}`);
  console.log(`e2e variations: four takes ${list.map((t) => `#${t.id} seed ${t.request.seed} ${t.finish.frames} frames`).join(', ')}; streamed together: ${streamedTogether}`);
}

try {
  await main();
  console.log('e2e variations: ok');
} catch (e) {
  console.error(`e2e variations: FAIL: ${e.message}`);
  process.exitCode = 1;
} finally {
  await context?.close().catch(() => {});
  server?.kill();
  rmSync(scratch, { recursive: true, force: true });
}
