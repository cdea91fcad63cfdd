// The JSON shapes the Go app service sends, derived from the Wails-generated
// models (wailsjs/go/models.ts, made from the Go types) so that a change on
// the Go side is a type error here. Both transports deliver plain objects,
// so the classes' methods are stripped.
import type { app, engine, voice, projects, loudness } from '../../wailsjs/go/models';

type Plain<T> = T extends (infer U)[]
  ? Plain<U>[]
  : T extends object
    ? { -readonly [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: Plain<T[K]> }
    : T;

export type ModelStatus = Plain<app.ModelStatus>;
export type Settings = Plain<app.Settings>;
export type Preset = Plain<app.Preset>;
export type StatsView = Plain<app.StatsView>;
export type Take = Plain<app.Take>;
export type Sampling = Plain<engine.Sampling>;
export type SpeechRequest = Plain<engine.SpeechRequest>;
export type Finish = Plain<engine.Finish>;
export type Memory = Plain<engine.Memory>;
export type Info = Plain<engine.Info>;
export type Peaks = Plain<app.Peaks>;
export type StudioStatus = Plain<app.StudioStatus>;
export type PlaybackStatus = Plain<app.PlaybackStatus>;
export type LoadProgress = Plain<app.LoadProgress>;
export type ModelSummary = Plain<app.ModelSummary>;
export type ModelCandidate = Plain<app.ModelCandidate>;
export type ExportRequest = Plain<app.ExportRequest>;
export type ExportResult = Plain<app.ExportResult>;
export type TokenCount = Plain<app.TokenCount>;
export type Rerun = Plain<app.Rerun>;
export type Voice = Plain<voice.Voice>;
// []byte fields travel as base64 strings in JSON (the generated type says number[]).
export type VoiceRecording = Omit<Plain<app.VoiceRecording>, 'data'> & { data: string };
export type CastRequest = Plain<app.CastRequest>;
export type TakesLimitEffect = Plain<app.TakesLimitEffect>;
export type TakesLimitChange = Plain<app.TakesLimitChange>;
export type ScriptCheck = Plain<app.ScriptCheck>;
export type ScriptProblem = Plain<app.ScriptProblem>;
export type ServerStatus = Plain<app.ServerStatus>;
export type RequestRecord = Plain<app.RequestRecord>;
export type Project = Plain<projects.Project>;
export type ProjectSummary = Plain<projects.Summary>;
export type ProjectLine = Plain<projects.Line>;
export type SceneSettings = Plain<projects.ExportSettings>;
export type SavedProject = Plain<projects.Saved>;
export type LoudnessPlan = Plain<loudness.Plan>;
export type SceneExportRequest = Plain<app.SceneExportRequest>;
export type SceneExportResult = Plain<app.SceneExportResult>;
export type ProjectRename = Plain<app.ProjectRename>;

/** The waveform of a chunk as it arrives (app.AudioEvent). */
export interface AudioEvent {
  take_id: number;
  from_sample: number;
  samples: number;
  bucket: number;
  peaks: number[];
}

/** A message for the status line (app.Notice). */
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

/** Events the service pushes (app.Event names) and what each carries. */
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
