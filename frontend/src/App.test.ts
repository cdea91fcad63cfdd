import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi, type Mock } from 'vitest';
import App from './App.svelte';
import type { Service } from './lib/service';
import { ServiceError } from './lib/transport';
import type { ModelStatus, Project, ScenePreview, ScreenplayProject, ScriptCheck, ServerStatus, Settings, SpeechRequest, StatsView, Take, TakesLimitEffect, Voice } from './lib/types';

/** Answers the way the Go service does with no backend and no model. */
let warnings: string[] = [];
let connection: (up: boolean) => void = () => {};

function noModelService(loaded = false, engine = { backend: 'cpu', batch: 0 }) {
  let settings: Settings = {
    script: 'Saved draft.',
    sampling: { temperature: 1, top_p: 0.9, top_k: 30 },
    seed: 0,
    max_frames: 2048,
    model_dir: '',
    presets: [{ name: 'Public defaults', sampling: { temperature: 1, top_p: 0.9, top_k: 30 } }],
    memory_cap_bytes: 0,
    output_device: 'default',
    volume: 1,
    server_port: 7860,
    takes_limit_bytes: 2 * 2 ** 30, // (2 << 30 overflows to a negative 32-bit number in JS)
    voices: [],
    isolate_engine: false,
    voice_library_max_bytes: 256 * 2 ** 20,
    batch: 0,
    voice_cache_bytes: 0,
    lexicon: [],
  };
  // loaded: the model panel says a model is loaded (Speak can be pressed;
  // the service still refuses takes).
  const status: ModelStatus = loaded
    ? {
        state: 'loaded',
        dir: '/m/demo',
        message: 'demo model loaded',
        error: '',
        can_load: true,
        pending: '',
        info: { model: '/m/demo', backend: engine.backend, batch: engine.batch, demo: true, sample_rate_hz: 44100, samples_per_frame: 2048, codebooks: 10, parameters: 1000 },
      }
    : {
        state: 'none',
        dir: '',
        message: 'no model loaded (no backend in this build can load models yet)',
        error: '',
        can_load: false,
        pending: '',
      };
  const stats: StatsView = { loaded: false, message: 'no model loaded', total_bytes: 0 };
  const playback = {
    state: 'stopped',
    take_id: 0,
    live: false,
    position_s: 0,
    volume: 1,
    underruns: 0,
    silence_s: 0,
    output: { state: 'off', message: 'no audio output in this mode' },
    scene_preview_id: 0,
  };
  const refuse = (msg: string): never => {
    throw new ServiceError(msg);
  };
  // The projects directory, as app/projects keeps it (in memory here).
  const store = new Map<string, Project>();
  let current = '';
  let clock = 1_000;
  const keep = (p: Project): Project => {
    const saved = { ...structuredClone(p), saved_ms: ++clock };
    store.set(p.name, saved);
    current = p.name;
    return structuredClone(saved);
  };
  const svc = {
    projects: vi.fn(async () => [...store.values()].sort((a, b) => b.saved_ms - a.saved_ms).map((p) => ({ name: p.name, saved_ms: p.saved_ms, lines: p.lines.length, takes: p.takes.length }))),
    currentProject: vi.fn(async () => current),
    openProject: vi.fn(async (name: string) => structuredClone(store.get(name) ?? refuse(`no such project: "${name}"`))),
    createProject: vi.fn(async (name: string) => {
      if (store.has(name)) refuse(`a project with that name exists: "${name}"`);
      return keep({ format: 1, name, script: settings.script, cast: [], sampling: settings.sampling, seed: settings.seed, max_frames: settings.max_frames, lines: [], takes: [], export: { gap_s: 0.4, target_lufs: -16, format: 'wav', per_line: false, captions: '', trim_silence: true }, saved_ms: 0 });
    }),
    saveProject: vi.fn(async (p: Project) => ({ project: keep(p) })),
    renameProject: vi.fn(async (from: string, to: string) => {
      const p = store.get(from) ?? refuse(`no such project: "${from}"`);
      store.delete(from);
      return keep({ ...p, name: to });
    }),
    duplicateProject: vi.fn(async (from: string, to: string) => keep({ ...(store.get(from) ?? refuse(`no such project: "${from}"`)), name: to })),
    projectScreenplay: vi.fn(async (project: string) => ({ name: `${project}.fountain`, text: `Title: ${project}\n\nSPEAKER 0\n${store.get(project)?.script ?? ''}\n` })),
    chooseScreenplayPath: vi.fn(async () => refuse('no native file dialog in the browser')),
    exportScreenplay: vi.fn(async () => refuse('no native file dialog in the browser')),
    trashProject: vi.fn(async (name: string) => {
      if (!store.delete(name)) refuse(`there is no project called "${name}"`);
      return { name, path: `/trash/files/${name}` };
    }),
    parseScreenplay: vi.fn(async (text: string) => {
      const speeches = [...text.matchAll(/^(\w+): (.*)$/gm)];
      if (!speeches.length) refuse('found no dialogue');
      const names = [...new Set(speeches.map((m) => m[1]))];
      const script = speeches.map((m) => `<|speaker:${names.indexOf(m[1])}|>${m[2]}`).join('\n');
      return { screenplay: { script, lines: speeches.length, characters: names.map((name) => ({ name, lines: speeches.filter((m) => m[1] === name).length })), left_out: [] }, cast: [] };
    }),
    createProjectFromScreenplay: vi.fn(async (r: ScreenplayProject) => {
      if (store.has(r.name)) refuse(`a project called "${r.name}" exists: choose another name`);
      const pre = await svc.parseScreenplay(r.text);
      return keep({ format: 1, name: r.name, script: pre.screenplay.script, cast: r.cast, characters: pre.screenplay.characters.map((c) => c.name), sampling: settings.sampling, seed: settings.seed, max_frames: settings.max_frames, lines: [], takes: [], export: { gap_s: 0.4, target_lufs: -16, format: 'wav', per_line: false, captions: '', trim_silence: true }, saved_ms: 0 });
    }),
    chooseScenePath: vi.fn(async () => refuse('no native file dialog in the browser: type the path')),
    exportScene: vi.fn(async () => refuse('no native file dialog in the browser: type the path')),
    sceneFile: vi.fn(async () => refuse('line 1 has no chosen take: star one of its takes first')),
    previewScene: vi.fn(async (): Promise<ScenePreview> => refuse('no line has a chosen take with audio: star a take of a line to hear the scene')),
    playScene: vi.fn(async () => refuse('scene preview 1 is gone')),
    scenePCM: vi.fn(async () => refuse('scene preview 1 is gone')),
    modelStatus: vi.fn(async () => status),
    loadModel: vi.fn(async (dir: string) => {
      throw new ServiceError(`cannot load ${dir}: no backend in this build can load models yet`);
    }),
    unloadModel: vi.fn(async () => status),
    speak: vi.fn(async () => {
      throw new ServiceError('no model loaded');
    }),
    stop: vi.fn(async () => false),
    stats: vi.fn(async () => stats),
    settings: vi.fn(async () => settings),
    setSettings: vi.fn(async (s: Settings) => {
      if (!(s.sampling.top_p > 0 && s.sampling.top_p <= 1)) {
        throw new ServiceError(`invalid: top_p must be in (0, 1], got ${s.sampling.top_p}`);
      }
      settings = s;
      return s;
    }),
    takes: vi.fn(async () => []),
    studio: vi.fn(async () => ({
      audio: { state: 'unavailable', message: 'no audio output device' },
      dialogs: false,
      takes_dir: '',
      takes_bytes: 0,
      takes_limit_bytes: 2 * 2 ** 30,
      export_dir: '/home/u/Music',
      demo_dir: '',
      gpu: 'GPU backend unavailable: no CUDA-capable GPU found (cuInit: NoDevice); takes run on the CPU backend',
      warnings: warnings,
    })),
    takePeaks: vi.fn(async () => refuse('no take #1')),
    renameTake: vi.fn(async () => refuse('no take')),
    deleteTake: vi.fn(async () => refuse('no take')),
    rerunTake: vi.fn(async () => refuse('no take')),
    exportTake: vi.fn(async () => refuse('no take')),
    defaultExportPath: vi.fn(async () => refuse('no take')),
    chooseExportPath: vi.fn(async () => refuse('no native file dialog in the browser: type the path')),
    chooseModelDir: vi.fn(async () => refuse('no native file dialog in the browser: type the path')),
    findModels: vi.fn(async () => []),
    inspectModel: vi.fn(async () => refuse('no such directory')),
    makeDemoModel: vi.fn(async (): Promise<string> => refuse('no demo directory')),
    loadStatus: vi.fn(async () => ({ dir: '', read_bytes: 0, total_bytes: 0, done: false })),
    countTokens: vi.fn(async () => refuse('no model loaded')),
    play: vi.fn(async () => refuse('no take')),
    pausePlayback: vi.fn(async () => playback),
    stopPlayback: vi.fn(async () => playback),
    playback: vi.fn(async () => playback),
    takePCM: vi.fn(async () => refuse('no take')),
    voices: vi.fn(async () => settings.voices),
    saveVoice: vi.fn(async (v: Voice) => {
      if (v.name === 'default') refuse('invalid: voices: voice name "default" is the model\'s own voice and cannot be redefined');
      settings = { ...settings, voices: [...settings.voices.filter((o) => o.name !== v.name), v] };
      return settings.voices;
    }),
    deleteVoice: vi.fn(async (name: string) => {
      settings = { ...settings, voices: settings.voices.filter((o) => o.name !== name) };
      return settings.voices;
    }),
    createVoice: vi.fn(async (name: string, transcript: string, audio: string) => {
      if (!transcript.trim()) refuse('invalid: the transcript is empty: type what the recording says');
      const v: Voice = { name, direction: '', sampling: { temperature: 1, top_p: 0.9, top_k: 30 }, seed: 0, reference: 'a'.repeat(64) };
      void audio;
      settings = { ...settings, voices: [...settings.voices.filter((o) => o.name !== name), v] };
      return settings.voices;
    }),
    voiceRecording: vi.fn(async () => refuse('no recording')),
    speakCast: vi.fn(async () => {
      throw new ServiceError('no model loaded');
    }),
    speakVariations: vi.fn(async () => {
      throw new ServiceError('no model loaded');
    }),
    takeFile: vi.fn(async () => refuse('no take')),
    takesLimitEffect: vi.fn(async (limit: number): Promise<TakesLimitEffect> => ({ limit_bytes: limit, remove: [], bytes: 0 })),
    applyTakesLimit: vi.fn(async () => settings),
    checkScript: vi.fn(async (text: string): Promise<ScriptCheck> => {
      const at = text.indexOf('<|im_end|>');
      return {
        chars: [...text].length,
        bytes: new TextEncoder().encode(text.trim()).length,
        max_bytes: 16384,
        tokenizer: false,
        problems: at < 0 ? [] : [{ start: at, end: at + 10, token: '<|im_end|>', reason: 'the structural token <|im_end|> is not allowed in user text' }],
      };
    }),
    checkLineFileName: vi.fn(async () => {}),
    speakLines: vi.fn(async (): Promise<Take[]> => refuse('no model loaded')),
    chooseLexiconPath: vi.fn(async () => ''),
    exportLexicon: vi.fn(async () => 0),
    readLexicon: vi.fn(async () => refuse('invalid: not JSON: give an array of pronunciations, or a settings file')),
    serverStatus: vi.fn(async (): Promise<ServerStatus> => ({ running: true, address: 'http://127.0.0.1:7860', control: false, port: 7860, model: 'drama-3', error: '', log: [] })),
    startServer: vi.fn(async () => refuse('busy: this page is served by the speech server')),
    stopServer: vi.fn(async () => refuse('busy: this page is served by the speech server')),
    on: vi.fn(() => () => {}),
    onConnection: vi.fn((l: (up: boolean) => void) => {
      connection = l;
      l(true);
      return () => {};
    }),
    kind: 'http' as const,
  };
  return svc satisfies Service;
}

async function settle() {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
  flushSync();
}

let app: ReturnType<typeof mount> | undefined;
afterEach(() => {
  if (app) unmount(app);
  app = undefined;
  document.body.innerHTML = '';
});

async function start(loaded = false, engine?: { backend: string; batch: number }) {
  const service = noModelService(loaded, engine);
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(App, { target, props: { service, statsEveryMs: 60_000 } });
  await settle();
  return { service, root: target };
}

function region(root: HTMLElement, name: string): HTMLElement {
  const el = root.querySelector<HTMLElement>(`[data-region="${name}"]`);
  if (!el) throw new Error(`no region ${name}`);
  return el;
}

describe('App without a model', () => {
  it('has every region, filled from the service', async () => {
    const { root, service } = await start();
    for (const r of ['script', 'sampling', 'model', 'readouts', 'transport', 'takes']) region(root, r);
    expect(root.querySelector('textarea')!.value).toBe('Saved draft.');
    expect(region(root, 'model').textContent).toContain('no model loaded');
    // The GPU line says what it means; the driver's words are one click away.
    expect(region(root, 'model').querySelector('[data-gpu]')?.textContent).toContain('GPU backend unavailable — takes run on the CPU backend');
    [...region(root, 'model').querySelectorAll('button')].find((b) => b.textContent === 'why')!.click();
    flushSync();
    expect(region(root, 'model').querySelector('[data-gpu-detail]')?.textContent).toContain('no CUDA-capable GPU found');
    expect(region(root, 'takes').textContent).toContain('No takes yet.');
    expect(service.on).toHaveBeenCalledTimes(10);
  });

  it('disables Speak without a model and says why; the chip offers the demo', async () => {
    const { root, service } = await start();
    const speak = region(root, 'transport').querySelector<HTMLButtonElement>('button.speak')!;
    expect(speak.disabled).toBe(true);
    expect(region(root, 'transport').querySelector('[data-blocked]')!.textContent).toContain('Load a model first');
    expect(region(root, 'modelchip').textContent).toContain('No model');
    expect(region(root, 'lines').querySelector('[data-empty="lines"]')).toBeNull(); // the saved draft is one line
    expect(region(root, 'lines').textContent).toContain('Saved draft.');
    expect(region(root, 'takes').querySelector('[data-empty="takes"]')).not.toBeNull();
    expect(service.createProject).toHaveBeenCalledWith('Untitled');
    expect(region(root, 'project').dataset.project).toBe('Untitled');
  });

  it('shows no numbers in the readouts, only why', async () => {
    const { root } = await start();
    const readouts = region(root, 'readouts');
    for (const k of ['used', 'peak', 'cap', 'rtf', 'ttfa']) {
      expect(readouts.querySelector(`[data-readout="${k}"]`)!.textContent).toBe('—');
    }
    expect(readouts.textContent).toContain('no model loaded');
    expect(readouts.textContent).not.toMatch(/\d/);
  });

  it('Speak sends the script and settings and shows what the service answered', async () => {
    const { root, service } = await start(true);
    const text = root.querySelector('textarea')!;
    text.value = 'To be, or not to be.';
    text.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    region(root, 'transport').querySelector<HTMLButtonElement>('button.speak')!.click();
    await settle();
    expect(service.speak).toHaveBeenCalledWith({
      text: 'To be, or not to be.',
      sampling: { temperature: 1, top_p: 0.9, top_k: 30 },
      seed: 0,
      max_frames: 2048,
    });
    const out = region(root, 'transport').querySelector('output')!;
    expect(out.dataset.answer).toBe('error');
    expect(out.textContent!.trim()).toBe('no model loaded');
    // The draft was saved before the take was asked for.
    expect(service.setSettings).toHaveBeenCalledWith(expect.objectContaining({ script: 'To be, or not to be.' }));
  });

  it('a sampling change goes to the service; its refusal is shown', async () => {
    const { root, service } = await start(true);
    const topP = region(root, 'sampling').querySelector<HTMLInputElement>('input[name="top_p"]')!;
    topP.value = '0.8';
    topP.dispatchEvent(new Event('input', { bubbles: true }));
    topP.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    expect(service.setSettings).toHaveBeenLastCalledWith(expect.objectContaining({ sampling: { temperature: 1, top_p: 0.8, top_k: 30 } }));
    expect(region(root, 'sampling').textContent).toContain('saved');

    topP.value = '1.5';
    topP.dispatchEvent(new Event('input', { bubbles: true }));
    topP.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    // The refusal is next to the field it is about, and Speak refuses with it.
    expect(region(root, 'sampling').querySelector('[data-problem="top_p"]')!.textContent).toBe('top_p must be in (0, 1], got 1.5');
    region(root, 'transport').querySelector<HTMLButtonElement>('button.speak')!.click();
    await settle();
    expect(service.speak).not.toHaveBeenCalled();
    expect(region(root, 'transport').querySelector('output')!.textContent).toContain('Top-p: top_p must be in (0, 1]');
  });

  it('the voices editor saves a voice through the service, and later settings keep it', async () => {
    const { root, service } = await start();
    const voices = region(root, 'voices');
    const set = (name: string, value: string) => {
      const el = voices.querySelector<HTMLInputElement>(`[name="${name}"]`)!;
      el.value = value;
      el.dispatchEvent(new Event('input', { bubbles: true }));
    };
    set('voice_name', 'default');
    flushSync();
    voices.querySelector<HTMLButtonElement>('button[type="submit"]')!.click();
    await settle();
    expect(voices.textContent).toContain('cannot be redefined');

    set('voice_name', 'narrator');
    set('voice_speaker', '3');
    set('voice_direction', 'calm, low');
    set('voice_seed', '42');
    flushSync();
    voices.querySelector<HTMLButtonElement>('button[type="submit"]')!.click();
    await settle();
    expect(service.saveVoice).toHaveBeenLastCalledWith({
      name: 'narrator',
      speaker: 3,
      direction: 'calm, low',
      sampling: { temperature: 1, top_p: 0.9, top_k: 30 },
      seed: 42,
    });
    expect(voices.textContent).toContain('narrator');
    expect(voices.textContent).toContain('[calm, low]');

    const topP = region(root, 'sampling').querySelector<HTMLInputElement>('input[name="top_p"]')!;
    topP.value = '0.8';
    topP.dispatchEvent(new Event('input', { bubbles: true }));
    topP.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    expect(service.setSettings).toHaveBeenLastCalledWith(expect.objectContaining({ voices: [expect.objectContaining({ name: 'narrator' })] }));
  });

  it('the cast panel clones a voice from a file and Speak casts it for speaker 0', async () => {
    const { root, service } = await start(true);
    const cast = region(root, 'cast');
    const set = (name: string, value: string) => {
      const el = cast.querySelector<HTMLInputElement | HTMLTextAreaElement>(`[name="${name}"]`)!;
      el.value = value;
      el.dispatchEvent(new Event('input', { bubbles: true }));
    };
    cast.querySelector<HTMLButtonElement>('button[type="submit"]')!.click();
    await settle();
    expect(cast.textContent).toContain('choose a recording');
    expect(service.createVoice).not.toHaveBeenCalled();

    const file = cast.querySelector<HTMLInputElement>('input[name="clone_file"]')!;
    Object.defineProperty(file, 'files', { value: [new File([new Uint8Array([82, 73, 70, 70])], 'ada.wav')] });
    file.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    set('clone_name', 'Ada');
    set('clone_transcript', 'Hello there.');
    flushSync();
    cast.querySelector<HTMLButtonElement>('button[type="submit"]')!.click();
    await settle();
    expect(service.createVoice).toHaveBeenCalledWith('Ada', 'Hello there.', btoa('RIFF'));
    expect(cast.textContent).toContain('voice "Ada" made from ada.wav');
    expect(region(root, 'castchips').querySelector<HTMLSelectElement>('select[name="cast_0"]')!.value).toBe('Ada');
    expect(region(root, 'voices').textContent).toContain('cloned');

    const text = root.querySelector('textarea')!;
    text.value = 'To be, or not to be.';
    text.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    region(root, 'transport').querySelector<HTMLButtonElement>('button.speak')!.click();
    await settle();
    expect(service.speak).not.toHaveBeenCalled();
    expect(service.speakCast).toHaveBeenCalledWith({
      request: { text: 'To be, or not to be.', sampling: { temperature: 1, top_p: 0.9, top_k: 30 }, seed: 0, max_frames: 2048 },
      cast: ['Ada'],
    });

    // Back to the model's own voice: Speak speaks without a cast.
    const sel = region(root, 'castchips').querySelector<HTMLSelectElement>('select[name="cast_0"]')!;
    sel.value = '';
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
    region(root, 'transport').querySelector<HTMLButtonElement>('button.speak')!.click();
    await settle();
    expect(service.speak).toHaveBeenCalled();
  });

  it('Speak ×N sends the request with the count, what varies and its values', async () => {
    const { root, service } = await start(true); // a model: Speak is not blocked
    const text = root.querySelector('textarea')!;
    text.value = 'Four ways.';
    text.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    const transport = region(root, 'transport');
    const choose = (name: string, value: string) => {
      const el = transport.querySelector<HTMLSelectElement>(`select[name="${name}"]`)!;
      el.value = value;
      el.dispatchEvent(new Event('change', { bubbles: true }));
      flushSync();
    };
    choose('variations_count', '3');
    expect(transport.querySelector('button.speak-n')!.textContent).toBe('Speak ×3');
    transport.querySelector<HTMLButtonElement>('button.speak-n')!.click();
    await settle();
    const request = { text: 'Four ways.', sampling: { temperature: 1, top_p: 0.9, top_k: 30 }, seed: 0, max_frames: 2048 };
    expect(service.speakVariations).toHaveBeenLastCalledWith({ request, count: 3, sweep: 'seed', values: [], cast: [] });
    expect(transport.textContent).toContain('no model loaded');

    choose('variations_sweep', 'temperature');
    const values = transport.querySelector<HTMLInputElement>('input[name="variations_values"]')!;
    values.value = '0.5, 0.7 0.9';
    values.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    transport.querySelector<HTMLButtonElement>('button.speak-n')!.click();
    await settle();
    expect(service.speakVariations).toHaveBeenLastCalledWith({ request, count: 3, sweep: 'temperature', values: [0.5, 0.7, 0.9], cast: [] });

    values.value = '0.5, warm';
    values.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    const calls = vi.mocked(service.speakVariations).mock.calls.length;
    transport.querySelector<HTMLButtonElement>('button.speak-n')!.click();
    await settle();
    expect(vi.mocked(service.speakVariations).mock.calls.length).toBe(calls);
    expect(transport.textContent).toContain('the values must be numbers');
  });

  it('Delete… moves the open project to the trash only when confirmed, and opens another', async () => {
    const { root, service } = await start(true);
    const bar = region(root, 'project');
    const asked: string[] = [];
    vi.stubGlobal('prompt', () => 'Second');
    bar.querySelector<HTMLButtonElement>('button:nth-of-type(1)')!.click(); // New…
    await settle();
    expect(bar.getAttribute('data-project')).toBe('Second');
    const del = async () => {
      [...bar.querySelectorAll('button')].find((b) => b.textContent === 'Project ▾')!.click();
      await settle();
      bar.querySelector<HTMLButtonElement>('[role="menu"] button:last-child')!.click();
      await settle();
    };
    vi.stubGlobal('confirm', (q: string) => (asked.push(q), false));
    await del();
    expect(service.trashProject).not.toHaveBeenCalled();
    expect(asked[0]).toContain('Move the project "Second" to the trash?');
    expect(bar.querySelector('[role="menu"]')).toBeNull(); // an item closes the menu
    vi.stubGlobal('confirm', () => true);
    await del();
    expect(service.trashProject).toHaveBeenCalledWith('Second');
    expect(bar.getAttribute('data-project')).toBe('Untitled');
    // Nothing saved the trashed project after the trash (which would have made it again).
    const trashedAt = vi.mocked(service.trashProject).mock.invocationCallOrder[0];
    const saves = vi.mocked(service.saveProject).mock;
    expect(saves.calls.filter(([p], i) => p.name === 'Second' && saves.invocationCallOrder[i] > trashedAt)).toEqual([]);
    await new Promise((r) => setTimeout(r, 600)); // past the autosave's wait
    expect(saves.calls.filter(([p], i) => p.name === 'Second' && saves.invocationCallOrder[i] > trashedAt)).toEqual([]);
    vi.unstubAllGlobals();
  });

  it('Import screenplay shows the characters and the script first, then makes the project with its names', async () => {
    const { root, service } = await start(true);
    const pick = (text: string, name: string) => {
      const input = region(root, 'project').querySelector<HTMLInputElement>('input[name="screenplay_file"]')!;
      Object.defineProperty(input, 'files', { value: [new File([text], name)], configurable: true });
      input.dispatchEvent(new Event('change', { bubbles: true }));
    };
    pick('Nothing is said here.', 'empty.fountain');
    await settle();
    expect(region(root, 'screenplay').querySelector('[data-problem="screenplay"]')!.textContent).toContain('found no dialogue');
    expect(region(root, 'screenplay').querySelector<HTMLButtonElement>('button[type="submit"]')!.disabled).toBe(true);
    region(root, 'screenplay').querySelector<HTMLButtonElement>('button[type="button"]')!.click();
    await settle();
    expect(root.querySelector('[data-region="screenplay"]')).toBeNull();
    expect(service.createProjectFromScreenplay).not.toHaveBeenCalled();

    pick('Ada: Where were you?\nBen: Out.\nAda: Out where?', 'Night Shift.txt');
    await settle();
    const dialog = region(root, 'screenplay');
    expect([...dialog.querySelectorAll('[data-character]')].map((r) => r.getAttribute('data-character'))).toEqual(['Ada', 'Ben']);
    expect(dialog.querySelector('[data-screenplay-summary]')!.textContent).toContain('3 speeches by 2 characters');
    expect(dialog.querySelector<HTMLInputElement>('input[name="screenplay_name"]')!.value).toBe('Night Shift');
    expect(dialog.querySelector<HTMLSelectElement>('select[name="screenplay_voice_1"]')!.value).toBe('');
    dialog.querySelector<HTMLButtonElement>('button[type="submit"]')!.click();
    await settle();
    expect(service.createProjectFromScreenplay).toHaveBeenCalledWith({ name: 'Night Shift', text: 'Ada: Where were you?\nBen: Out.\nAda: Out where?', narrate: false, cast: ['', ''] });
    expect(root.querySelector('[data-region="screenplay"]')).toBeNull();
    expect(region(root, 'project').getAttribute('data-project')).toBe('Night Shift');
    expect(root.querySelector<HTMLInputElement>('input[name="character_1"]')!.value).toBe('Ben');
    expect([...root.querySelectorAll('.line [data-character]')].map((e) => e.textContent)).toEqual(['Ada', 'Ben', 'Ada']);
  });

  it('Speak all starts the engine\'s batch of lines together on the GPU, and one line at a time on the CPU', async () => {
    for (const [backend, batch, groupsWanted] of [
      ['cuda', 2, [['One.', 'Two.'], ['Three.']]],
      ['cpu', 4, [['One.'], ['Two.'], ['Three.']]],
    ] as const) {
      const { root, service } = await start(true, { backend, batch });
      let next = 0;
      const finished = (request: SpeechRequest, voices: string[] = []): Take => ({
        id: ++next, name: '', request, state: 'finished', frames: 10, error: '', started_ms: 0, frames_per_s: 0,
        samples: 20480, sample_rate_hz: 44100, underruns: 0, stored: true, source: 'studio', voices,
      });
      const speak = service.speak as unknown as Mock<(r: SpeechRequest) => Promise<Take>>;
      const speakLines = service.speakLines as unknown as Mock<(ls: { request: SpeechRequest; cast: string[] }[]) => Promise<Take[]>>;
      speak.mockImplementation(async (r) => finished(r));
      speakLines.mockImplementation(async (ls) => ls.map((l) => finished(l.request, l.cast)));
      const text = root.querySelector('textarea')!;
      text.value = 'One.\n\nTwo.\n\nThree.';
      text.dispatchEvent(new Event('input', { bubbles: true }));
      await settle();
      region(root, 'lines').querySelector<HTMLButtonElement>('button.speak')!.click();
      for (let i = 0; i < 4; i++) await settle();
      const groups = speakLines.mock.calls.map(([ls]) => ls.map((l) => l.request.text));
      const singles = speak.mock.calls.map(([r]) => r.text);
      expect([backend, groups, singles]).toEqual([backend, groupsWanted, []]);
      expect(region(root, 'lines').textContent).toContain('3 of 3 lines have a chosen take');
      unmount(app!);
      app = undefined;
      document.body.innerHTML = '';
    }
  });

  it('a lower takes limit says what it would remove and applies only when confirmed', async () => {
    const { root, service } = await start();
    const GiB = 2 ** 30;
    service.takesLimitEffect.mockImplementation(async (limit: number) => ({ limit_bytes: limit, remove: [{ id: 1, name: 'Opening line', bytes: 5 << 20 }], bytes: 5 << 20 }));
    const panel = region(root, 'studio-settings');
    const limit = panel.querySelector<HTMLInputElement>('input[name="takes_limit"]')!;
    const lower = async () => {
      limit.value = '1';
      limit.dispatchEvent(new Event('input', { bubbles: true }));
      limit.dispatchEvent(new Event('change', { bubbles: true }));
      await settle();
    };
    await lower();
    expect(service.takesLimitEffect).toHaveBeenCalledWith(GiB);
    const confirm = panel.querySelector<HTMLElement>('[data-confirm="takes-limit"]')!;
    expect(confirm.textContent).toContain('#1 (Opening line)');
    expect(service.setSettings).not.toHaveBeenCalled();
    const button = (name: string) => [...panel.querySelectorAll('button')].find((b) => b.textContent === name)!;
    button('Keep the takes').click();
    await settle();
    expect(panel.querySelector('[data-confirm]')).toBeNull();
    expect(limit.value).toBe('2');
    expect(service.applyTakesLimit).not.toHaveBeenCalled();

    await lower();
    button('Remove and apply').click();
    await settle();
    expect(service.applyTakesLimit).toHaveBeenCalledWith({ limit_bytes: GiB, remove: [1] });
  });

  it('the takes run together are a studio setting', async () => {
    const { root, service } = await start();
    const batch = region(root, 'studio-settings').querySelector<HTMLSelectElement>('select[name="batch"]')!;
    expect(batch.value).toBe('4'); // 0 in the settings: the engine's default
    batch.value = '2';
    batch.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    expect(service.setSettings).toHaveBeenLastCalledWith(expect.objectContaining({ batch: 2 }));
  });

  it('the voice cache is a studio setting in MiB, empty for the default', async () => {
    const { root, service } = await start();
    const field = region(root, 'studio-settings').querySelector<HTMLInputElement>('input[name="voice_cache"]')!;
    expect(field.value).toBe(''); // 0 in the settings: the engine's default
    field.value = '2048';
    field.dispatchEvent(new Event('input', { bubbles: true }));
    field.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    expect(service.setSettings).toHaveBeenLastCalledWith(expect.objectContaining({ voice_cache_bytes: 2 * 1024 ** 3 }));
    field.value = 'lots';
    field.dispatchEvent(new Event('input', { bubbles: true }));
    field.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    expect(service.setSettings).toHaveBeenCalledTimes(1);
    expect(region(root, 'studio-settings').querySelector('[role="status"]')!.textContent).toContain('enter numbers');
  });

  it('an empty number field is not sent as 0', async () => {
    const { root, service } = await start();
    const temp = region(root, 'sampling').querySelector<HTMLInputElement>('input[name="temperature"]')!;
    temp.value = '';
    temp.dispatchEvent(new Event('input', { bubbles: true }));
    temp.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    expect(service.setSettings).not.toHaveBeenCalled();
    expect(region(root, 'sampling').querySelector('[data-problem="temperature"]')!.textContent).toBe('enter a number');
  });

  it('settings a load takes, changed since, are said with a way to load the model again', async () => {
    const { root, service } = await start(true);
    const model = region(root, 'model');
    expect(model.querySelector('[data-pending]')).toBeNull();
    const pending = 'changed since the model loaded, applied when it is loaded again: voice cache 512.0 MiB → 2.0 GiB';
    const changed = { ...(await service.modelStatus()), pending };
    service.modelStatus.mockImplementation(async () => changed);
    service.loadModel.mockImplementation((async () => ({ ...changed, pending: '' })) as never);
    const onModel = service.on.mock.calls.find((c) => (c as unknown[])[0] === 'model') as unknown as [string, (m: ModelStatus) => void];
    onModel[1](changed);
    await settle();
    expect(model.querySelector('[data-pending]')!.textContent).toContain(pending);
    [...model.querySelectorAll('button')].find((b) => b.textContent === 'Load again')!.click();
    await settle();
    expect(service.loadModel).toHaveBeenCalledWith('/m/demo');
    expect(model.querySelector('[data-pending]')).toBeNull();
  });

  it('Load shows the reason the service gave', async () => {
    const { root, service } = await start();
    const model = region(root, 'model');
    const path = model.querySelector<HTMLInputElement>('input')!;
    path.value = '/models/drama3';
    path.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    [...model.querySelectorAll('button')].find((b) => b.textContent === 'Load')!.click();
    await settle();
    expect(service.loadModel).toHaveBeenCalledWith('/models/drama3');
    expect(model.querySelector('[role="alert"]')!.textContent).toBe(
      'cannot load /models/drama3: no backend in this build can load models yet',
    );
  });

  it('Use the demo model writes, inspects and loads it in one click', async () => {
    const { root, service } = await start();
    service.makeDemoModel.mockImplementation(async () => '/data/demo-model');
    service.inspectModel.mockImplementation(async () => {
      throw new ServiceError('inspect: no config.json');
    });
    const model = region(root, 'model');
    const demo = () => [...model.querySelectorAll('button')].find((b) => b.textContent === 'Use the demo model')!.click();
    demo();
    await settle();
    expect(service.makeDemoModel).toHaveBeenCalled();
    expect(service.loadModel).not.toHaveBeenCalled(); // a failed step stops there, with its reason
    expect(model.querySelector('[role="alert"]')!.textContent).toBe('inspect: no config.json');
    const summary = { dir: '/data/demo-model', demo: true, layers: 2, hidden: 64, experts: 4, codebooks: 13, parameters: 1000, stored_bytes: 4000, file_bytes: 5000, memory_needed_bytes: 9000, memory_basis: 'CPU', context_rows: 128, problems: [], error: '' };
    service.inspectModel.mockImplementation((async () => summary) as never);
    demo();
    await settle();
    expect(service.loadModel).toHaveBeenCalledWith('/data/demo-model');
  });

  it('the status line says in words where sound goes; warnings and details on demand', async () => {
    warnings = ['settings /home/u/.config/proscenium/settings.json: invalid: volume must be in [0, 1], got 3: using the default settings'];
    try {
      const { root } = await start();
      const status = region(root, 'status');
      expect(status.textContent).toContain('Audio plays in this browser');
      expect(status.querySelector('.warning')!.textContent).toBe('1 start-up warning');
      expect(root.textContent).not.toContain('using the default settings');
      [...status.querySelectorAll('button')].find((b) => b.textContent === 'details')!.click();
      flushSync();
      expect(root.querySelector('[data-status-details]')!.textContent).toContain('using the default settings');
    } finally {
      warnings = [];
    }
  });

  it('a value that is not a number is refused where it is typed, never sent as 0', async () => {
    const { root, service } = await start(true);
    for (const [text, reason] of [
      ['abc', '"abc" is not a number'],
      ['0,7', 'use a decimal point: 0.7'],
    ]) {
      const seed = region(root, 'sampling').querySelector<HTMLInputElement>('input[name="temperature"]')!;
      seed.value = text;
      seed.dispatchEvent(new Event('input', { bubbles: true }));
      seed.dispatchEvent(new Event('change', { bubbles: true }));
      await settle();
      expect(region(root, 'sampling').querySelector('[data-problem="temperature"]')!.textContent).toBe(reason);
      region(root, 'transport').querySelector<HTMLButtonElement>('button.speak')!.click();
      await settle();
      expect(region(root, 'transport').querySelector('output')!.textContent).toContain(`Temperature: ${reason}`);
    }
    expect(service.setSettings).not.toHaveBeenCalled();
    expect(service.speak).not.toHaveBeenCalled();
  });

  it('structural tokens are flagged in the editor and Speak refuses them', async () => {
    const { root, service } = await start(true);
    const text = root.querySelector('textarea')!;
    text.value = 'Hello <|im_end|> there';
    text.dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise((r) => setTimeout(r, 200));
    await settle();
    expect(region(root, 'script').querySelector('.overlay .refused')!.textContent).toBe('<|im_end|>');
    expect(region(root, 'script').querySelector('[data-script-problems]')!.textContent).toContain('<|im_end|> is not allowed');
    region(root, 'transport').querySelector<HTMLButtonElement>('button.speak')!.click();
    await settle();
    expect(service.speak).not.toHaveBeenCalled();
    expect(region(root, 'transport').querySelector('output')!.textContent).toContain('the script cannot be spoken');
  });

  it('reads the whole state again when the connection comes back', async () => {
    const { root, service } = await start();
    expect(service.settings).toHaveBeenCalledTimes(1);
    connection(false);
    flushSync();
    expect(root.querySelector('[data-connection]')!.getAttribute('data-connection')).toBe('lost');
    connection(true);
    await settle();
    expect(root.querySelector('[data-connection]')!.getAttribute('data-connection')).toBe('connected');
    for (const m of ['settings', 'modelStatus', 'takes', 'studio', 'stats', 'serverStatus'] as const) expect(service[m]).toHaveBeenCalledTimes(2);
  });

  it('keeps the draft typed while the connection was lost, and saves it', async () => {
    const { root, service } = await start();
    const text = root.querySelector('textarea')!;
    connection(false);
    text.value = 'Typed while away.';
    text.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    connection(true);
    await settle();
    expect(text.value).toBe('Typed while away.');
    expect(service.setSettings).toHaveBeenCalledWith(expect.objectContaining({ script: 'Typed while away.' }));
  });

  // Seen in CI under load: a field committed while another project was being
  // opened was saved, but the sampling fields, made afresh from the settings
  // before that save landed, showed the project's value instead.
  it('a sampling field committed while a project opens keeps what was typed', async () => {
    const service = noModelService(true);
    // Two projects on disk: Other with its own max frames, Untitled the current one.
    const other = await service.createProject('Other');
    await service.saveProject({ ...other, max_frames: 100 });
    await service.createProject('Untitled');
    const target = document.createElement('div');
    document.body.appendChild(target);
    app = mount(App, { target, props: { service, statsEveryMs: 60_000 } });
    await settle();
    expect(region(target, 'sampling').dataset.project).toBe('Untitled');

    // Opening Other applies its settings; that save is held in flight...
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    const setSettings = service.setSettings.getMockImplementation()!;
    service.setSettings.mockImplementationOnce(async (s: Settings) => {
      await held;
      return setSettings(s);
    });
    const pick = region(target, 'project').querySelector<HTMLSelectElement>('select[aria-label="Project"]')!;
    pick.value = 'Other';
    pick.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    expect(service.setSettings).toHaveBeenLastCalledWith(expect.objectContaining({ max_frames: 100 }));
    // ...while max frames is committed in the fields still shown.
    const frames = region(target, 'sampling').querySelector<HTMLInputElement>('input[name="max_frames"]')!;
    frames.value = '77';
    frames.dispatchEvent(new Event('input', { bubbles: true }));
    frames.dispatchEvent(new Event('change', { bubbles: true }));
    release();
    await settle();
    await settle();
    expect(region(target, 'sampling').dataset.project).toBe('Other');
    expect((await service.settings()).max_frames).toBe(77);
    expect(region(target, 'sampling').querySelector<HTMLInputElement>('input[name="max_frames"]')!.value).toBe('77');
  });
});
