// The typed face of the Go app.Service over any Transport.
import type { SceneFile, TakeFile, Transport } from './transport';
import type {
  EventData,
  EventName,
  ExportRequest,
  ExportResult,
  LexiconEntry,
  LoadProgress,
  ModelCandidate,
  ModelStatus,
  ModelSummary,
  Peaks,
  PlaybackStatus,
  Rerun,
  ScriptCheck,
  ServerStatus,
  Settings,
  SpeechRequest,
  StatsView,
  StudioStatus,
  Take,
  TakesLimitChange,
  TakesLimitEffect,
  TokenCount,
  Voice,
  VoiceRecording,
  CastRequest,
  Variations,
  Project,
  ScreenplayPreview,
  ScreenplayProject,
  TrashedProject,
  ScreenplayFile,
  ScreenplayExport,
  ProjectSummary,
  SavedProject,
  SceneExportRequest,
  SceneExportResult,
  ScenePreview,
} from './types';

export interface Service {
  readonly kind: 'wails' | 'http';
  modelStatus(): Promise<ModelStatus>;
  loadModel(dir: string): Promise<ModelStatus>;
  unloadModel(): Promise<ModelStatus>;
  speak(req: SpeechRequest): Promise<Take>;
  /** Resolves true when a take was running and has stopped. */
  stop(): Promise<boolean>;
  stats(): Promise<StatsView>;
  settings(): Promise<Settings>;
  setSettings(s: Settings): Promise<Settings>;
  /** What a takes limit would remove now (nothing changes). */
  takesLimitEffect(limit: number): Promise<TakesLimitEffect>;
  /** Sets the takes limit, removing the takes the user confirmed (exactly those it needs gone). */
  applyTakesLimit(c: TakesLimitChange): Promise<Settings>;
  takes(): Promise<Take[]>;
  studio(): Promise<StudioStatus>;
  takePeaks(id: number): Promise<Peaks>;
  renameTake(id: number, name: string): Promise<Take>;
  deleteTake(id: number): Promise<boolean>;
  rerunTake(r: Rerun): Promise<Take>;
  exportTake(r: ExportRequest): Promise<ExportResult>;
  defaultExportPath(r: ExportRequest): Promise<string>;
  chooseExportPath(r: ExportRequest): Promise<string>;
  chooseModelDir(): Promise<string>;
  findModels(): Promise<ModelCandidate[]>;
  inspectModel(dir: string): Promise<ModelSummary>;
  makeDemoModel(): Promise<string>;
  loadStatus(): Promise<LoadProgress>;
  countTokens(text: string): Promise<TokenCount>;
  play(id: number, at: number): Promise<PlaybackStatus>;
  pausePlayback(paused: boolean): Promise<PlaybackStatus>;
  stopPlayback(): Promise<PlaybackStatus>;
  playback(): Promise<PlaybackStatus>;
  voices(): Promise<Voice[]>;
  saveVoice(v: Voice): Promise<Voice[]>;
  deleteVoice(name: string): Promise<Voice[]>;
  /** A voice cloned from a recording (the file's bytes in base64) and its transcript. */
  createVoice(name: string, transcript: string, audioBase64: string): Promise<Voice[]>;
  /** A cloned voice's recording as given. */
  voiceRecording(name: string): Promise<VoiceRecording>;
  /** Speak with voices cast for <|speaker:0|>, <|speaker:1|>, … */
  speakCast(c: CastRequest): Promise<Take>;
  /** Speak ×N: count takes of one request together (other seeds, or one setting swept). */
  speakVariations(v: Variations): Promise<Take[]>;
  /** A take's PCM (browser mode: GET /api/takes/{id}/pcm). */
  takePCM(id: number): Promise<Float32Array>;
  /** A take encoded for download (browser mode: GET /api/takes/{id}/export). */
  takeFile(id: number, format: string): Promise<TakeFile>;
  /** The engine's prompt rules applied to a script, and its counts as the servers count. */
  checkScript(text: string): Promise<ScriptCheck>;
  /** The pronunciations in a file the user picked (an array, or a settings file); changes nothing. */
  readLexicon(data: string): Promise<LexiconEntry[]>;
  /** The pronunciations' save dialog (the window); "" when cancelled. */
  chooseLexiconPath(): Promise<string>;
  /** Writes the pronunciations where the window's dialog chose; how many. */
  exportLexicon(path: string): Promise<number>;
  serverStatus(): Promise<ServerStatus>;
  /** The projects on disk, the most recently saved first. */
  projects(): Promise<ProjectSummary[]>;
  /** The project opened or saved last ("" for none). */
  currentProject(): Promise<string>;
  openProject(name: string): Promise<Project>;
  /** A new project called name, with the studio's script and sampling settings. */
  createProject(name: string): Promise<Project>;
  saveProject(p: Project): Promise<SavedProject>;
  renameProject(from: string, to: string): Promise<Project>;
  duplicateProject(from: string, to: string): Promise<Project>;
  /** A project's script as a Fountain screenplay (its file name and text): the browser's download. */
  projectScreenplay(project: string): Promise<ScreenplayFile>;
  /** The window's save dialog for a project's screenplay; "" when cancelled. */
  chooseScreenplayPath(project: string): Promise<string>;
  /** Writes a project's screenplay to an absolute path (the window); resolves to the path. */
  exportScreenplay(r: ScreenplayExport): Promise<string>;
  /** Deletes a project: moves it into the desktop's trash (a file manager restores it). */
  trashProject(name: string): Promise<TrashedProject>;
  /** A screenplay read as a script (Fountain or "Name: speech"), changing nothing: the import's preview. */
  parseScreenplay(text: string, narrate: boolean): Promise<ScreenplayPreview>;
  /** A new project of a screenplay: its script, its characters named, cast as asked. */
  createProjectFromScreenplay(r: ScreenplayProject): Promise<Project>;
  /** Speak all's lines started together (at most the engine's batch), each in its cast voices. */
  speakLines(lines: CastRequest[]): Promise<Take[]>;
  /** Rejects with why name cannot name a line's own file in the scene export. */
  checkLineFileName(name: string): Promise<void>;
  /** The scene's save dialog (the window); "" when cancelled. */
  chooseScenePath(project: string): Promise<string>;
  /** Writes the scene (and its line files) where the window's dialog chose. */
  exportScene(r: SceneExportRequest): Promise<SceneExportResult>;
  /** The scene as one file (a zip with the line files when asked) for the browser to save. */
  sceneFile(project: string): Promise<SceneFile>;
  /** The project's scene as saved, assembled for listening (its waveform and lines; the service keeps its audio). */
  previewScene(project: string): Promise<ScenePreview>;
  /** Plays scene preview id through the sound card from at seconds (the window). */
  playScene(id: number, at: number): Promise<PlaybackStatus>;
  /** A scene preview's PCM, float32 mono (the browser plays it). */
  scenePCM(id: number): Promise<Float32Array>;
  startServer(): Promise<ServerStatus>;
  stopServer(): Promise<ServerStatus>;
  on<E extends EventName>(event: E, listener: (data: EventData[E]) => void): () => void;
  /** Whether the service's events reach this page (browser: the event socket). */
  onConnection(listener: (connected: boolean) => void): () => void;
}

export function createService(t: Transport): Service {
  const c = <T>(m: Parameters<Transport['call']>[0], args: unknown[]) => t.call(m, args) as Promise<T>;
  return {
    kind: t.kind,
    modelStatus: () => c('ModelStatus', []),
    loadModel: (dir) => c('LoadModel', [dir]),
    unloadModel: () => c('UnloadModel', []),
    speak: (req) => c('Speak', [req]),
    stop: () => c('Stop', []),
    stats: () => c('Stats', []),
    settings: () => c('Settings', []),
    setSettings: (s) => c('SetSettings', [s]),
    takesLimitEffect: (limit) => c('TakesLimitEffect', [limit]),
    applyTakesLimit: (ch) => c('ApplyTakesLimit', [ch]),
    takes: () => c('Takes', []),
    studio: () => c('Studio', []),
    takePeaks: (id) => c('TakePeaks', [id]),
    renameTake: (id, name) => c('RenameTake', [{ id, name }]),
    deleteTake: (id) => c('DeleteTake', [id]),
    rerunTake: (r) => c('RerunTake', [r]),
    exportTake: (r) => c('ExportTake', [r]),
    defaultExportPath: (r) => c('DefaultExportPath', [r]),
    chooseExportPath: (r) => c('ChooseExportPath', [r]),
    chooseModelDir: () => c('ChooseModelDir', []),
    findModels: () => c('FindModels', []),
    inspectModel: (dir) => c('InspectModel', [dir]),
    makeDemoModel: () => c('MakeDemoModel', []),
    loadStatus: () => c('LoadStatus', []),
    countTokens: (text) => c('CountTokens', [text]),
    play: (id, at) => c('Play', [{ id, at_s: at }]),
    pausePlayback: (paused) => c('PausePlayback', [paused]),
    stopPlayback: () => c('StopPlayback', []),
    playback: () => c('Playback', []),
    voices: () => c('Voices', []),
    saveVoice: (v) => c('SaveVoice', [v]),
    deleteVoice: (name) => c('DeleteVoice', [name]),
    createVoice: (name, transcript, audio) => c('CreateVoice', [name, transcript, audio]),
    voiceRecording: (name) => c('VoiceRecording', [name]),
    speakCast: (cr) => c('SpeakCast', [cr]),
    speakVariations: (v) => c('SpeakVariations', [v]),
    takePCM: (id) => t.fetchPCM(id),
    takeFile: (id, format) => t.fetchExport(id, format),
    checkScript: (text) => c('CheckScript', [text]),
    readLexicon: (data) => c('ReadLexicon', [data]),
    chooseLexiconPath: () => c('ChooseLexiconPath', []),
    exportLexicon: (path) => c('ExportLexicon', [path]),
    serverStatus: () => c('ServerStatus', []),
    projects: () => c('Projects', []),
    currentProject: () => c('CurrentProject', []),
    openProject: (name) => c('OpenProject', [name]),
    createProject: (name) => c('CreateProject', [name]),
    saveProject: (p) => c('SaveProject', [p]),
    renameProject: (from, to) => c('RenameProject', [{ from, to }]),
    duplicateProject: (from, to) => c('DuplicateProject', [{ from, to }]),
    trashProject: (name) => c('TrashProject', [name]),
    projectScreenplay: (project) => c('ProjectScreenplay', [project]),
    chooseScreenplayPath: (project) => c('ChooseScreenplayPath', [project]),
    exportScreenplay: (r) => c('ExportScreenplay', [r]),
    parseScreenplay: (text, narrate) => c('ParseScreenplay', [{ text, narrate }]),
    createProjectFromScreenplay: (r) => c('CreateProjectFromScreenplay', [r]),
    checkLineFileName: (name) => c('CheckLineFileName', [name]),
    speakLines: (lines) => c('SpeakLines', [lines]),
    chooseScenePath: (project) => c('ChooseScenePath', [project]),
    exportScene: (r) => c('ExportScene', [r]),
    sceneFile: (project) => t.fetchScene(project),
    previewScene: (project) => c('PreviewScene', [project]),
    playScene: (id, at) => c('PlayScene', [{ id, at_s: at }]),
    scenePCM: (id) => t.fetchScenePCM(id),
    startServer: () => c('StartServer', []),
    stopServer: () => c('StopServer', []),
    on: (event, listener) => t.on(event, listener as (data: unknown) => void),
    onConnection: (listener) => t.onConnection(listener),
  };
}
