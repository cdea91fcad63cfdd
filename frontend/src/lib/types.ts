// The JSON shapes the Go app service sends, derived from the Wails-generated
// models (wailsjs/go/models.ts, made from the Go types) so that a change on
// the Go side is a type error here. Both transports deliver plain objects,
// so the classes' methods are stripped.
import type { app, engine } from '../../wailsjs/go/models';

type Plain<T> = T extends (infer U)[]
  ? Plain<U>[]
  : T extends object
    ? { -readonly [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: Plain<T[K]> }
    : T;

export type ModelStatus = Plain<app.ModelStatus>;
export type Settings = Plain<app.Settings>;
export type StatsView = Plain<app.StatsView>;
export type Take = Plain<app.Take>;
export type Sampling = Plain<engine.Sampling>;
export type SpeechRequest = Plain<engine.SpeechRequest>;
export type Finish = Plain<engine.Finish>;
export type Memory = Plain<engine.Memory>;
export type Info = Plain<engine.Info>;

/** Events the service pushes (app.Event names) and what each carries. */
export interface EventData {
  model: ModelStatus;
  take: Take;
  stats: StatsView;
}
export type EventName = keyof EventData;
