// Test of the desktop window (issue 31): the studio built with -tags e2e
// (windowtest.go) under Xvfb, WebKitGTK rendering in software, fresh XDG
// folders. window-driver.js, run in the window's page, works the studio as
// a person would through the window's own bindings: a new window shows the
// model chip and the empty states, seed -1 our message, top-p as typed; the
// demo model loads from the chip (CPU backend); a three-line script for two
// speakers splits into three lines; line 1 gets a take (played through the
// sound card where there is one) and a star, Speak all speaks the other two,
// line 2 again at T 0.5 and its new take starred; a long take's progress is
// read while it runs; the scene exports through the save dialog's binding
// (answered by the test with the name it proposes) and ffmpeg's ebur128
// filter measures the file within 0.5 LU of -16 LUFS; the Delete question
// is inside the window; at 900×700, 1280×800 and 1920×1080 no text leaves
// its box or lies under a panel, no panel lies on another, and axe-core
// finds no serious violation (page-check.js). Then the studio starts again
// on the same folders: the project, its lines, chosen takes and sampling
// are back.
// SCREENSHOTS=DIR saves the window at those sizes there.
//
//   node e2e/window.e2e.mjs PATH/TO/proscenium-studio-e2e
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ffmpegLoudness } from './loudness.mjs';

const studio = process.argv[2];
if (!studio) {
  console.error('usage: node e2e/window.e2e.mjs PATH/TO/proscenium-studio-e2e (make window-e2e builds it)');
  process.exit(2);
}
// Per run of the window: the first (the demo model made, five takes on the
// CPU) took 15 s on 2 shared cores (docs/PERF.md).
const runLimitMs = Number(process.env.WINDOW_E2E_LIMIT_S || 120) * 1000;
const sources = [createRequire(import.meta.url).resolve('axe-core/axe.min.js'), new URL('./page-check.js', import.meta.url), new URL('./window-driver.js', import.meta.url)].map((f) =>
  readFileSync(f, 'utf8'),
);
const scratch = mkdtempSync(join(tmpdir(), 'proscenium-window-e2e-'));
const shots = join(scratch, 'shots');
const saves = join(scratch, 'saved');
mkdirSync(shots);
mkdirSync(saves);

function fail(msg) {
  throw new Error(msg);
}

/** Runs the window once with the driver in phase cfg.phase; its windowtest lines. */
function runWindow(cfg) {
  const driver = join(scratch, `driver-${cfg.phase}.js`);
  writeFileSync(driver, `window.__windowTest = ${JSON.stringify(cfg)};\n${sources.join('\n;\n')}`);
  return new Promise((res, rej) => {
    const child = spawn('xvfb-run', ['-a', '-s', '-screen 0 1920x1080x24', resolve(studio)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: a timeout ends xvfb-run, Xvfb and the studio
      env: {
        ...process.env,
        XDG_CONFIG_HOME: join(scratch, 'config'),
        XDG_DATA_HOME: join(scratch, 'data'),
        XDG_CACHE_HOME: join(scratch, 'cache'),
        XDG_MUSIC_DIR: join(scratch, 'music'),
        HF_HOME: join(scratch, 'hf'),
        HF_HUB_CACHE: '',
        // Software rendering: Xvfb has no GPU.
        WEBKIT_DISABLE_COMPOSITING_MODE: '1',
        LIBGL_ALWAYS_SOFTWARE: '1',
        NO_AT_BRIDGE: '1',
        PROSCENIUM_WINDOW_TEST: driver,
        PROSCENIUM_WINDOW_TEST_SAVE_DIR: saves,
        PROSCENIUM_WINDOW_TEST_SHOTS: shots,
      },
    });
    const said = [];
    let rest = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      const parts = (rest + d).split('\n');
      rest = parts.pop();
      for (const l of parts) {
        if (!l.startsWith('windowtest:')) {
          stderr = `${stderr}${l}\n`.slice(-8000); // Wails' own log lines
          continue;
        }
        said.push(l);
        console.log(`window (${cfg.phase}): ${l.slice('windowtest: '.length)}`);
      }
    });
    child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-8000)));
    const timer = setTimeout(() => {
      process.kill(-child.pid, 'SIGKILL');
      rej(new Error(`the window (${cfg.phase}) did not finish within ${runLimitMs / 1000} s; its stderr:\n${stderr}`));
    }, runLimitMs);
    const started = Date.now();
    child.on('exit', (code) => {
      clearTimeout(timer);
      console.log(`window (${cfg.phase}): ${((Date.now() - started) / 1000).toFixed(1)} s from xvfb-run to the window's exit`);
      if (said.includes('windowtest: PASS') && code === 0) res(said);
      else rej(new Error(`the window (${cfg.phase}) exited ${code} ${said.find((l) => l.startsWith('windowtest: FAIL')) ?? 'without a verdict'}; its stderr:\n${stderr}`));
    });
  });
}

async function main() {
  const started = Date.now();
  const said = await runWindow({ phase: 'first', shots: !!process.env.SCREENSHOTS });
  const { chosen, scene } = JSON.parse(said.find((l) => l.startsWith('windowtest: record '))?.slice('windowtest: record '.length) ?? '{}');
  if (!chosen || chosen.length !== 3 || !scene) fail(`the first run named no chosen takes or scene: ${said.join(' | ')}`);
  if (!scene.startsWith(saves + '/')) fail(`the scene was written to ${scene}, not where the save dialog said (${saves})`);
  const m = ffmpegLoudness(scene);
  if (Math.abs(m.integrated - -16) > 0.5 || m.truePeak > -1 + 0.3) fail(`scene ${scene}: ffmpeg measures ${JSON.stringify(m)}, target -16 LUFS`);
  console.log(`window: the scene ${scene}: ffmpeg ebur128 measures ${m.integrated} LUFS (target -16), true peak ${m.truePeak} dBFS`);
  const onDisk = JSON.parse(readFileSync(join(scratch, 'data', 'proscenium', 'projects', 'Untitled', 'project.json'), 'utf8'));
  if (onDisk.lines.map((l) => String(l.chosen)).join() !== chosen.join()) fail(`project.json's chosen takes: ${onDisk.lines.map((l) => l.chosen)}, the window showed ${chosen}`);

  const again = await runWindow({ phase: 'restart', chosen });
  const { lexicon } = JSON.parse(again.find((l) => l.startsWith('windowtest: record '))?.slice('windowtest: record '.length) ?? '{}');
  if (!lexicon?.startsWith(saves + '/')) fail(`the pronunciations were written to ${lexicon}, not where the save dialog said (${saves})`);
  const lexiconFile = readFileSync(lexicon, 'utf8');
  if (lexiconFile !== '[\n  {"written":"SQL","spoken":"sequel"}\n]\n') fail(`${lexicon} holds ${JSON.stringify(lexiconFile)}`);
  console.log(`window: the pronunciations exported to ${lexicon} as a lexicon file`);
  if (process.env.SCREENSHOTS) for (const f of readdirSync(shots)) copyFileSync(join(shots, f), join(process.env.SCREENSHOTS, f));
  console.log(`window: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

let code = 0;
try {
  await main();
  console.log('window: PASS');
} catch (e) {
  console.error(`window: FAIL: ${e.stack || e}`);
  code = 1;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(code);
