// The JSON shapes the Go app service sends, derived from the Wails-generated
// models (wailsjs/go/models.ts, made from the Go types) so that a change on
// the Go side is a type error here. Both transports deliver plain objects,
// so the classes' methods are stripped.
import type { api, app, model, playback, sampling, server, settings, takes, voice, voices, projects, loudness, lexicon, scene, script } from '../../wailsjs/go/models';

type Plain<T> = T extends (infer U)[]
  ? Plain<U>[]
  : T extends object
    ? { -readonly [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: Plain<T[K]> }
    : T;

export type ModelStatus = Plain<model.ModelStatus>;
export type Settings = Plain<settings.Settings>;
export type Preset = Plain<settings.Preset>;
export type LexiconEntry = Plain<lexicon.Entry>;
export type StatsView = Plain<model.StatsView>;
export type Take = Plain<takes.Take>;
export type Sampling = Plain<sampling.Settings>;
export type SpeechRequest = Plain<api.SpeechRequest>;
export type Finish = Plain<api.Finish>;
export type Memory = Plain<api.Memory>;
export type Info = Plain<api.Info>;
export type Peaks = Plain<takes.Peaks>;
export type StudioStatus = Plain<app.StudioStatus>;
export type PlaybackStatus = Plain<playback.PlaybackStatus>;
export type LoadProgress = Plain<model.LoadProgress>;
export type ModelSummary = Plain<model.ModelSummary>;
export type ModelCandidate = Plain<model.ModelCandidate>;
export type ExportRequest = Plain<takes.ExportRequest>;
export type ExportResult = Plain<takes.ExportResult>;
export type TokenCount = Plain<model.TokenCount>;
export type Rerun = Plain<takes.Rerun>;
export type Voice = Plain<voice.Voice>;
// []byte fields travel as base64 strings in JSON (the generated type says number[]).
export type VoiceRecording = Omit<Plain<voices.VoiceRecording>, 'data'> & { data: string };
export type CastRequest = Plain<voices.CastRequest>;
export type Variations = Plain<takes.Variations>;
export type TakesLimitEffect = Plain<takes.TakesLimitEffect>;
export type TakesLimitChange = Plain<takes.TakesLimitChange>;
export type ScriptCheck = Plain<model.ScriptCheck>;
export type ScriptProblem = Plain<model.ScriptProblem>;
export type ServerStatus = Plain<server.ServerStatus>;
export type RequestRecord = Plain<server.RequestRecord>;
export type Project = Plain<projects.Project>;
export type ProjectSummary = Plain<projects.Summary>;
export type ProjectLine = Plain<projects.Line>;
export type SceneSettings = Plain<projects.ExportSettings>;
export type SavedProject = Plain<projects.Saved>;
export type LoudnessPlan = Plain<loudness.Plan>;
export type SceneExportRequest = Plain<app.SceneExportRequest>;
export type SceneExportResult = Plain<app.SceneExportResult>;
export type ProjectRename = Plain<app.ProjectRename>;
export type TrashedProject = Plain<app.TrashedProject>;
export type ScenePreview = Plain<scene.Preview>;
export type ScenePreviewLine = Plain<scene.PreviewLine>;
export type ScreenplayPreview = Plain<app.ScreenplayPreview>;
export type ScreenplayProject = Plain<app.ScreenplayProject>;
export type ScreenplayCharacter = Plain<script.Character>;
export type ScreenplayFile = Plain<app.ScreenplayFile>;
export type ScreenplayExport = Plain<app.ScreenplayExport>;

/** The waveform of a chunk as it arrives (takes.AudioEvent). */
export interface AudioEvent {
  take_id: number;
  from_sample: number;
  samples: number;
  bucket_samples: number;
  peaks: number[];
}

/** A message for the status line (studio.Notice). */
export interface Notice {
  level: string;
  text: string;
}

/** A chunk of a take's PCM (browser mode: a binary WebSocket message). */
export interface PCMChunk {
  take_id: number;
  from_frame: number;
  to_frame: number;
  pcm: Float32Array;
}

/** Events the service pushes (studio.Event names) and what each carries. */
export interface EventData {
  model: ModelStatus;
  take: Take;
  take_removed: number;
  stats: StatsView;
  audio: AudioEvent;
  pcm: PCMChunk;
  load: LoadProgress;
  notice: Notice;
  studio: StudioStatus;
  playback: PlaybackStatus;
  server: ServerStatus;
}
export type EventName = keyof EventData;
