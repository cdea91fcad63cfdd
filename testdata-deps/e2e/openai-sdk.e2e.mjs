// API test: the official `openai` npm SDK, as a new user would call it,
// against `proscenium serve --model DEMO` on 127.0.0.1 once /healthz says it is loaded (the demo checkpoint:
// random weights, so the audio is not speech, but every byte is the real
// pipeline's). Checks OpenAI's documentation example (mp3 by default),
// every response_format decoded back by ffmpeg to the take's samples within
// the codec's expected error at the right rate and length, sample_rate,
// speed, stream_format "audio" and "sse", instructions, a user-defined
// voice, the model list and the refusals (each naming its field). Every
// reply (and the trailers of a streamed one) is checked against
// docs/openapi.yaml (openapi-check.mjs): status, Content-Type, headers, JSON
// bodies and server-sent events.
//
//   node testdata-deps/e2e/openai-sdk.e2e.mjs PATH/TO/proscenium
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { openApiChecker } from './openapi-check.mjs';

const cli = process.argv[2];
if (!cli) {
  console.error('usage: node testdata-deps/e2e/openai-sdk.e2e.mjs PATH/TO/proscenium');
  process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), 'proscenium-openai-e2e-'));
let server;
let api; // openApiChecker: every reply goes through api.fetch
let passed = 0;
let failed = 0;

function check(name, ok, detail = '') {
  if (ok) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}${detail ? `: ${detail}` : ''}`);
  }
}

/** Starts the server on the demo checkpoint with a user voice in its settings. */
function startServer(modelDir) {
  const settings = join(scratch, 'settings.json');
  writeFileSync(
    settings,
    JSON.stringify({
      voices: [
        { name: 'narrator', speaker: 1, direction: 'calm, low', sampling: { temperature: 0.8, top_p: 0.85, top_k: 20 }, seed: 5 },
        { name: 'nova', speaker: null, direction: 'bright', sampling: { temperature: 1, top_p: 0.9, top_k: 30 }, seed: 0 },
      ],
    }),
  );
  return new Promise((resolve, reject) => {
    server = spawn(cli, ['serve', '--model', modelDir, '--host', '127.0.0.1', '--port', '0', '--settings', settings], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, XDG_DATA_HOME: join(scratch, 'data'), XDG_CONFIG_HOME: join(scratch, 'config') },
    });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server printed no URL in 60 s: ${out}`)), 60_000);
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

/**
 * Waits until /healthz says the model is loaded: serve answers while the
 * weights load, and says "still loading" until then.
 */
async function waitLoaded(url) {
  const deadline = Date.now() + 60_000;
  let health;
  while (Date.now() < deadline) {
    health = await (await api.fetch(`${url}healthz`)).json(); // the loading replies checked against the schema too
    if (health.model_loaded) return;
    if (!/still loading/.test(health.reason ?? '')) throw new Error(`healthz while loading: ${JSON.stringify(health)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the model did not load in 60 s: ${JSON.stringify(health)}`);
}

/** Decodes a file with ffmpeg (independent of our encoders): samples and rate. */
function decode(bytes, name, inputOpts = [], filter = '') {
  const path = join(scratch, name);
  writeFileSync(path, bytes);
  const probe = execFileSync('ffprobe', ['-v', 'error', ...inputOpts, '-show_entries', 'stream=sample_rate,channels', '-of', 'csv=p=0', path]).toString().trim();
  const [rate, channels] = probe.split(',').map(Number);
  const af = filter ? ['-af', filter] : [];
  const raw = execFileSync('ffmpeg', ['-v', 'error', ...inputOpts, '-i', path, ...af, '-f', 'f32le', '-'], { maxBuffer: 1 << 28 });
  const samples = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  return { samples, rate, channels };
}

function pcm16(buf) {
  const out = new Float32Array(buf.byteLength / 2);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = v.getInt16(2 * i, true) / 32767;
  return out;
}

/** Signal-to-error ratio (dB) of got against want, got shifted left by lag. */
function snr(want, got, lag) {
  let s = 0;
  let e = 0;
  for (let i = 0; i < want.length; i++) {
    const j = i + lag;
    const g = j >= 0 && j < got.length ? got[j] : 0;
    s += want[i] * want[i];
    e += (want[i] - g) * (want[i] - g);
  }
  return 10 * Math.log10(s / e);
}

function bestLag(want, got, maxLag) {
  let best = -Infinity;
  let at = 0;
  for (let lag = 0; lag <= maxLag; lag++) {
    const s = snr(want, got, lag);
    if (s > best) [best, at] = [s, lag];
  }
  return { lag: at, snr: best };
}

/**
 * Loudness error: the mean absolute difference (dB) of the RMS of got and
 * want in 1024-sample windows, got shifted left by lag (windows where want
 * is below −60 dBFS are skipped). Perceptual codecs keep each stretch's
 * loudness but not a noise-like waveform, so this is their expected error
 * on the demo model's audio.
 */
function loudnessError(want, got, lag) {
  const W = 1024;
  let sum = 0;
  let n = 0;
  for (let i = 0; i + W <= want.length; i += W) {
    let a = 0;
    let b = 0;
    for (let k = i; k < i + W; k++) {
      a += want[k] * want[k];
      const g = got[k + lag] ?? 0;
      b += g * g;
    }
    const da = 10 * Math.log10(a / W);
    if (da < -60) continue;
    sum += Math.abs(da - 10 * Math.log10(b / W + 1e-20));
    n++;
  }
  return sum / n;
}

const bytesOf = async (resp) => Buffer.from(await resp.arrayBuffer());

async function refused(client, name, body, param, says) {
  try {
    await client.audio.speech.create(body);
    check(name, false, 'accepted');
  } catch (e) {
    const ok = e instanceof OpenAI.BadRequestError && e.param === param && String(e.message).includes(says);
    check(name, ok, `${e.status} param=${e.param} ${e.message}`);
  }
}

async function main() {
  const modelDir = join(scratch, 'demo');
  execFileSync(cli, ['make-tiny', modelDir], { stdio: 'ignore' });
  const url = await startServer(modelDir);
  console.log(`openai-sdk e2e: server at ${url}`);
  await waitLoaded(url);
  const client = new OpenAI({ baseURL: `${url}v1`, apiKey: 'unused-by-a-local-server', maxRetries: 0, fetch: api.fetch });

  // OpenAI's documentation example, unchanged: mp3 by default.
  {
    const resp = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Today is a wonderful day to build something people love!' });
    const mp3 = await bytesOf(resp);
    const d = decode(mp3, 'doc.mp3');
    const frames = Number(resp.headers.get('x-audio-frames'));
    check('documentation example gives mp3', resp.headers.get('content-type') === 'audio/mpeg' && d.rate === 44100 && d.channels === 1);
    check('documentation example: voice alloy is the default voice', resp.headers.get('x-voice') === 'default');
    check('documentation example: length is the take', frames > 0 && d.samples.length === frames * 2048, `${d.samples.length} samples, ${frames} frames`);
  }

  const models = await client.models.list();
  const ids = models.data.map((m) => m.id);
  check('models lists the aliases', ['drama-3', 'fishaudio/drama-3', 'tts-1', 'tts-1-hd', 'gpt-4o-mini-tts'].every((id) => ids.includes(id)), ids.join(','));

  // The reference: the take as 16-bit PCM at the model's 44.1 kHz.
  const base = { model: 'drama-3', voice: 'default', input: 'Good evening, and welcome.', seed: 11, max_frames: 60, top_k: 5 };
  const refResp = await client.audio.speech.create({ ...base, response_format: 'pcm' });
  const refBytes = await bytesOf(refResp);
  const ref = pcm16(refBytes);
  const frames = Number(refResp.headers.get('x-audio-frames'));
  check('pcm is the take at 44.1 kHz', refResp.headers.get('content-type') === 'audio/pcm;rate=44100;channels=1;format=s16le' && ref.length === frames * 2048);

  // Every format decodes back to the take. Lossless: the PCM16 samples
  // exactly (≥ 90 dB SNR). Perceptual codecs: the right rate and length
  // (mp3 and Opus exact thanks to the LAME tag and the Ogg granule; ADTS AAC
  // starts late by the encoder's delay, found as the best match, and is
  // padded to a whole 1024-sample frame), and the speech band, 30 Hz – 6 kHz
  // (the demo model's random weights put most of their energy near 20 kHz,
  // which the codecs' low-pass filters remove by design, and some at DC,
  // which Opus removes), keeps its
  // loudness in every 1024-sample stretch within 1.5 dB (perceptual codecs
  // keep loudness, not a noise-like waveform).
  const formats = [
    { f: 'wav', type: 'audio/wav', minSNR: 90, rate: 44100 },
    { f: 'flac', type: 'audio/flac', minSNR: 90, rate: 44100 },
    { f: 'mp3', type: 'audio/mpeg', maxLoudness: 1.5, rate: 44100 },
    { f: 'aac', type: 'audio/aac', maxLoudness: 1.5, rate: 44100, maxLag: 2048, slack: 1024 },
    { f: 'opus', type: 'audio/ogg; codecs=opus', maxLoudness: 1.5, rate: 48000 },
  ];
  for (const t of formats) {
    const resp = await client.audio.speech.create({ ...base, response_format: t.f });
    const lossy = !t.minSNR;
    // 30 Hz – 6 kHz: six 2-pole low-passes (over 100 dB down at 20 kHz)
    // and three high-passes (Opus removes DC by design; the demo has some).
    const band = lossy ? [...Array(3).fill('highpass=f=30'), ...Array(6).fill('lowpass=f=6000')].join(',') : '';
    const d = decode(await bytesOf(resp), `take.${t.f}`, [], band);
    let want = ref;
    if (lossy) {
      // The reference through the same low-pass (and, for Opus, which always
      // decodes at 48 kHz, ffmpeg's soxr resampler first).
      const up = t.rate === 44100 ? '' : `aresample=${t.rate}:resampler=soxr,`;
      want = decode(refBytes, 'ref.pcm', ['-f', 's16le', '-ar', '44100', '-ac', '1'], up + band).samples;
    }
    const { lag, snr: s } = bestLag(want, d.samples, t.maxLag ?? 0);
    const lenOK = d.samples.length >= want.length + lag && d.samples.length <= want.length + lag + (t.slack ?? 0);
    const loud = loudnessError(want, d.samples, lag);
    // In the speech band the waveform also holds (≥ 8 dB: a wrong lag or
    // sign gives ≤ 0).
    const fidelity = t.minSNR ? s >= t.minSNR : loud <= t.maxLoudness && s >= 8;
    check(`${t.f}: ${t.type}, ${d.rate} Hz, ${d.samples.length} samples (take ${want.length}, lag ${lag}), SNR ${s.toFixed(1)} dB, loudness error ${loud.toFixed(2)} dB`,
      resp.headers.get('content-type') === t.type && d.rate === t.rate && d.channels === 1 && lenOK && fidelity);
  }

  // sample_rate: 24 kHz (OpenAI's pcm rate) resampled from the take.
  {
    const resp = await client.audio.speech.create({ ...base, response_format: 'wav', sample_rate: 24000 });
    const d = decode(await bytesOf(resp), 'take24.wav');
    const wantLen = Math.round((ref.length * 24000) / 44100);
    const path = join(scratch, 'ref.pcm');
    writeFileSync(path, refBytes);
    const raw = execFileSync('ffmpeg', ['-v', 'error', '-f', 's16le', '-ar', '44100', '-ac', '1', '-i', path, '-af', 'aresample=24000:resampler=soxr', '-f', 'f32le', '-']);
    const want = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
    const s = snr(want.subarray(0, wantLen), d.samples, 0);
    check(`sample_rate 24000: ${d.rate} Hz, ${d.samples.length} samples (want ${wantLen}), SNR ${s.toFixed(1)} dB against ffmpeg's soxr`, d.rate === 24000 && d.samples.length === wantLen && s >= 30);
  }

  // speed: a pitch-preserving stretch to half the length.
  {
    const resp = await client.audio.speech.create({ ...base, response_format: 'pcm', speed: 2 });
    const n = (await bytesOf(resp)).length / 2;
    check(`speed 2: ${n} samples for ${ref.length}`, n === Math.round(ref.length / 2));
  }

  // stream_format "audio": the bytes arrive in pieces and equal the whole reply.
  {
    const resp = await client.audio.speech.create({ ...base, response_format: 'pcm', stream_format: 'audio' });
    const parts = [];
    for await (const chunk of resp.body) parts.push(Buffer.from(chunk));
    const all = Buffer.concat(parts);
    check(`stream_format audio: ${parts.length} pieces equal the whole reply`, parts.length > 1 && all.equals(refBytes));
  }

  // stream_format "sse": speech.audio.delta events with base64 audio, then
  // speech.audio.done with the usage.
  {
    const resp = await client.audio.speech.create({ ...base, response_format: 'pcm', stream_format: 'sse' });
    const text = Buffer.from(await resp.arrayBuffer()).toString();
    const events = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => JSON.parse(e.slice(6)));
    const deltas = events.filter((e) => e.type === 'speech.audio.delta');
    const audio = Buffer.concat(deltas.map((e) => Buffer.from(e.audio, 'base64')));
    const done = events.at(-1);
    check(`stream_format sse: ${deltas.length} deltas equal the whole reply`, resp.headers.get('content-type') === 'text/event-stream' && deltas.length > 1 && audio.equals(refBytes));
    const u = done?.usage;
    check('stream_format sse: speech.audio.done with usage', done?.type === 'speech.audio.done' && u?.output_tokens === frames && u.input_tokens > 0 && u.total_tokens === u.input_tokens + frames, JSON.stringify(done));
  }

  // instructions become a leading [direction]: the same take as writing it.
  {
    const a = await bytesOf(await client.audio.speech.create({ ...base, response_format: 'pcm', instructions: 'whispering' }));
    const b = await bytesOf(await client.audio.speech.create({ ...base, response_format: 'pcm', input: `[whispering] ${base.input}` }));
    check('instructions are a leading direction', a.equals(b) && !a.equals(refBytes));
  }

  // A user-defined voice: its speaker tag, direction, sampling and seed.
  {
    const resp = await client.audio.speech.create({ model: 'drama-3', voice: 'narrator', input: base.input, max_frames: 60, response_format: 'pcm' });
    const a = await bytesOf(resp);
    const b = await bytesOf(
      await client.audio.speech.create({ model: 'drama-3', input: `<|speaker:1|>[calm, low] ${base.input}`, max_frames: 60, response_format: 'pcm', seed: 5, temperature: 0.8, top_p: 0.85, top_k: 20 }),
    );
    check('user voice "narrator" speaks with its settings', resp.headers.get('x-voice') === 'narrator' && a.equals(b));
    const nova = await client.audio.speech.create({ ...base, voice: 'nova', response_format: 'pcm' });
    await nova.arrayBuffer();
    check('an OpenAI name the user defined is the user voice', nova.headers.get('x-voice') === 'nova');
    const list = await (await api.fetch(`${url}v1/audio/voices`)).json();
    check('GET /v1/audio/voices lists them', list.data.map((v) => v.id).join(',') === 'default,narrator,nova' && list.openai_aliases.alloy === 'default', JSON.stringify(list.data.map((v) => v.id)));
  }

  // Refusals name their field.
  await refused(client, 'unknown model', { ...base, model: 'tts-2' }, 'model', '"tts-1"');
  await refused(client, 'unknown voice', { ...base, voice: 'bob' }, 'voice', '"narrator"');
  await refused(client, 'bad response_format', { ...base, response_format: 'ogg' }, 'response_format', '"opus"');
  await refused(client, 'speed out of range', { ...base, speed: 5 }, 'speed', '[0.25, 4]');
  await refused(client, 'top_p that float32 makes 0', { ...base, top_p: 1e-50 }, 'top_p', 'too small');
  await refused(client, 'instructions with brackets', { ...base, instructions: 'loud] [soft' }, 'instructions', '[ or ]');
  await refused(client, 'unknown sample_rate', { ...base, sample_rate: 8000 }, 'sample_rate', '44100');
  await refused(client, 'structural token in input', { ...base, input: 'hi <|im_end|>' }, 'input', '<|im_end|>');

  // The rest of the API's surface, for the OpenAPI checks.
  {
    const health = await (await api.fetch(`${url}healthz`)).json();
    check('GET /healthz: a model is loaded', health.model_loaded === true, JSON.stringify(health));
    const plain = await api.fetch(`${url}v1/audio/speech`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify(base) });
    check('a text/plain body is refused with 415', plain.status === 415, `${plain.status} ${await plain.text()}`);
    const form = new FormData();
    form.set('name', 'Ada');
    form.set('audio', new Blob([Buffer.from('RIFF')]), 'ada.wav');
    const missing = await api.fetch(`${url}v1/audio/voices`, { method: 'POST', body: form });
    const err = await missing.json();
    check('POST /v1/audio/voices without a transcript is a 400 naming it', missing.status === 400 && err.error?.param === 'transcript', JSON.stringify(err));
    // A voice from a 3 s recording (a tone: the demo codec encodes anything).
    const wav = join(scratch, 'ada.wav');
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=220:duration=3', '-ar', '44100', '-ac', '1', wav]);
    form.set('transcript', 'A tone, not words.');
    form.set('audio', new Blob([readFileSync(wav)]), 'ada.wav');
    const made = await api.fetch(`${url}v1/audio/voices`, { method: 'POST', body: form });
    const ada = await made.json();
    check('POST /v1/audio/voices makes a cloned voice', made.status === 201 && ada.id === 'Ada' && ada.reference === true, `${made.status} ${JSON.stringify(ada)}`);
    const spoken = await client.audio.speech.create({ ...base, voice: 'Ada', response_format: 'pcm', max_frames: 20 });
    await spoken.arrayBuffer();
    check('a request naming the cloned voice speaks in it', spoken.headers.get('x-voice') === 'Ada');
  }

  // The trailers of a streamed reply (fetch does not expose trailers).
  {
    const body = JSON.stringify({ ...base, response_format: 'pcm', stream_format: 'audio' });
    const endpoint = `${url}v1/audio/speech`;
    const { status, trailers } = await new Promise((resolve, reject) => {
      const req = request(endpoint, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, trailers: res.trailers }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
    const problems = api.checkTrailers('POST', endpoint, status, trailers);
    check(`stream_format audio: trailers ${Object.keys(trailers).join(', ')}`, status === 200 && Number(trailers['x-audio-frames']) === frames && problems.length === 0, problems.join('; '));
  }

  // Every reply against docs/openapi.yaml.
  const { replies, problems } = api.summary();
  for (const r of replies.filter((r) => r.problems.length > 0)) check(`openapi: ${r.where}`, false, r.problems.join('; '));
  check(`openapi: ${replies.length} replies match docs/openapi.yaml`, replies.length > 0 && replies.every((r) => r.problems.length === 0));
  check('openapi: every documented header of the responses seen appeared', problems.length === 0, problems.join('; '));
}

try {
  api = await openApiChecker(new URL('../../docs/openapi.yaml', import.meta.url));
  await main();
} catch (e) {
  failed++;
  console.log(`FAIL ${e.stack ?? e}`);
} finally {
  server?.kill();
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`openai-sdk e2e: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
