// The typed face of the Go app.Service over any Transport.
import type { Transport } from './transport';
import type { EventData, EventName, ModelStatus, Settings, SpeechRequest, StatsView, Take } from './types';

export interface Service {
  modelStatus(): Promise<ModelStatus>;
  loadModel(dir: string): Promise<ModelStatus>;
  unloadModel(): Promise<ModelStatus>;
  speak(req: SpeechRequest): Promise<Take>;
  /** Resolves true when a take was running and has stopped. */
  stop(): Promise<boolean>;
  stats(): Promise<StatsView>;
  settings(): Promise<Settings>;
  setSettings(s: Settings): Promise<Settings>;
  takes(): Promise<Take[]>;
  on<E extends EventName>(event: E, listener: (data: EventData[E]) => void): () => void;
}

export function createService(t: Transport): Service {
  return {
    modelStatus: () => t.call('ModelStatus', []) as Promise<ModelStatus>,
    loadModel: (dir) => t.call('LoadModel', [dir]) as Promise<ModelStatus>,
    unloadModel: () => t.call('UnloadModel', []) as Promise<ModelStatus>,
    speak: (req) => t.call('Speak', [req]) as Promise<Take>,
    stop: () => t.call('Stop', []) as Promise<boolean>,
    stats: () => t.call('Stats', []) as Promise<StatsView>,
    settings: () => t.call('Settings', []) as Promise<Settings>,
    setSettings: (s) => t.call('SetSettings', [s]) as Promise<Settings>,
    takes: () => t.call('Takes', []) as Promise<Take[]>,
    on: (event, listener) => t.on(event, listener as (data: unknown) => void),
  };
}
