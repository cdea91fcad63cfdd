// One way for the UI to reach the Go app service, two implementations:
// Wails bindings inside the desktop window, HTTP + WebSocket in a browser
// (`proscenium serve --ui`). Both call the same Go methods by name.
import * as Bindings from '../../wailsjs/go/app/Service';
import { EventsOn } from '../../wailsjs/runtime/runtime';
import type { EventName, PCMChunk } from './types';

/** A method of the Go app.Service (the names Wails binds). */
export type MethodName = keyof typeof Bindings;

export interface Transport {
  readonly kind: 'wails' | 'http';
  /** Calls a service method; rejects with ServiceError carrying the service's message. */
  call(method: MethodName, args: unknown[]): Promise<unknown>;
  /** Listens to a service event; returns the function that stops listening. */
  on(event: EventName, listener: (data: unknown) => void): () => void;
  /** Tells whether events arrive (true) or the connection is lost (false), now and on each change. */
  onConnection(listener: (connected: boolean) => void): () => void;
  /** A take's PCM, float32 mono (browser mode only). */
  fetchPCM(id: number): Promise<Float32Array>;
  /** A scene preview's PCM (Service.PreviewScene), float32 mono (browser mode only). */
  fetchScenePCM(id: number): Promise<Float32Array>;
  /** A take encoded as an export file and its proposed name (browser mode only: the browser saves it). */
  fetchExport(id: number, format: string): Promise<TakeFile>;
  /** A project's scene as its export settings say (browser mode only: the browser saves it). */
  fetchScene(project: string): Promise<SceneFile>;
}

/** An encoded take for the browser to save. */
export interface TakeFile {
  name: string;
  data: Blob;
}

/** A scene for the browser to save, and what it measures. */
export interface SceneFile extends TakeFile {
  /** Integrated loudness after normalising (LUFS), from the X-Scene-Loudness header. */
  loudness: number;
  /** True peak after normalising (dBTP). */
  truePeak: number;
  /** The gain stopped short of the target to keep the true peak under -1 dBTP. */
  limited: boolean;
  /** The line files kept quieter than the scene, from X-Scene-Note ('' when none). */
  note: string;
}

/** Parses a binary PCM message: "PCM1", take id, from frame, to frame, count (uint32 LE), float32 LE samples. */
export function parsePCMMessage(buf: ArrayBuffer): PCMChunk | null {
  if (buf.byteLength < 20) return null;
  const v = new DataView(buf);
  if (String.fromCharCode(v.getUint8(0), v.getUint8(1), v.getUint8(2), v.getUint8(3)) !== 'PCM1') return null;
  const n = v.getUint32(16, true);
  if (buf.byteLength !== 20 + 4 * n) return null;
  const pcm = new Float32Array(n);
  for (let i = 0; i < n; i++) pcm[i] = v.getFloat32(20 + 4 * i, true);
  return { take_id: v.getUint32(4, true), from_frame: v.getUint32(8, true), to_frame: v.getUint32(12, true), pcm };
}

/** What the service answered when a call failed. */
export class ServiceError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

type Bound = (...args: unknown[]) => Promise<unknown>;

export class WailsTransport implements Transport {
  readonly kind = 'wails';

  async call(method: MethodName, args: unknown[]): Promise<unknown> {
    try {
      return await (Bindings[method] as Bound)(...args);
    } catch (e) {
      // Wails rejects with the Go error's text.
      throw new ServiceError(e instanceof Error ? e.message : String(e));
    }
  }

  on(event: EventName, listener: (data: unknown) => void): () => void {
    return EventsOn(event, listener);
  }

  onConnection(listener: (connected: boolean) => void): () => void {
    listener(true); // the window and its service are one process
    return () => {};
  }

  fetchPCM(): Promise<Float32Array> {
    // The window plays through the sound card (Service.Play), not Web Audio.
    return Promise.reject(new ServiceError('the desktop window plays takes through the sound card'));
  }

  fetchScenePCM(): Promise<Float32Array> {
    // The window plays a scene through the sound card (Service.PlayScene).
    return Promise.reject(new ServiceError('the desktop window plays scenes through the sound card'));
  }

  fetchExport(): Promise<TakeFile> {
    // The window exports through the native save dialog (Service.ExportTake).
    return Promise.reject(new ServiceError('the desktop window exports through its save dialog'));
  }

  fetchScene(): Promise<SceneFile> {
    // The window writes the scene where its save dialog says (Service.ExportScene).
    return Promise.reject(new ServiceError('the desktop window exports through its save dialog'));
  }
}

export interface HttpDeps {
  fetch: typeof fetch;
  WebSocket: new (url: string, protocols?: string[]) => WebSocket;
  /** Delay before reconnecting the event socket, in ms. */
  reconnectMs: number;
  /** The server's API key, when it was started with one ("" for none). */
  apiKey: string;
  /** Asks for the API key after the server answered 401; null: the user declined. */
  askKey: () => string | null;
}

/**
 * POST /api/<Method> with the JSON array of arguments; events arrive on the
 * WebSocket /api/events as {name, data}. The socket opens with the first
 * listener and reconnects when it drops.
 */
export class HttpTransport implements Transport {
  readonly kind = 'http';
  private readonly deps: HttpDeps;
  private readonly listeners = new Map<string, Set<(data: unknown) => void>>();
  private socket: WebSocket | null = null;
  private closed = false;
  private connected = false;
  private readonly connectionListeners = new Set<(connected: boolean) => void>();

  constructor(
    private readonly origin: string,
    deps: Partial<HttpDeps> = {},
  ) {
    this.deps = {
      fetch: deps.fetch ?? globalThis.fetch.bind(globalThis),
      WebSocket: deps.WebSocket ?? globalThis.WebSocket,
      reconnectMs: deps.reconnectMs ?? 1000,
      apiKey: deps.apiKey ?? '',
      askKey: deps.askKey ?? (() => null),
    };
    this.key = this.deps.apiKey;
  }

  private key: string;

  /**
   * Fetches path with the API key (when there is one). A 401 asks for the
   * key (once for calls that failed together) and tries again with it.
   */
  private async request(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
    const attempt = () => {
      const headers = { ...init.headers, ...(this.key ? { Authorization: `Bearer ${this.key}` } : {}) };
      const opts = Object.keys(headers).length ? { ...init, headers } : init;
      return this.deps.fetch(`${this.origin}${path}`, opts);
    };
    let res: Response;
    try {
      const used = this.key;
      res = await attempt();
      if (res.status === 401) {
        const k = this.key !== used ? this.key : this.deps.askKey();
        if (k) {
          if (k !== this.key) {
            this.key = k;
            this.socket?.close(); // reconnects with the key
          }
          res = await attempt();
        }
      }
    } catch (e) {
      throw new ServiceError(`cannot reach the Proscenium server: ${e instanceof Error ? e.message : e}`);
    }
    return res;
  }

  async call(method: MethodName, args: unknown[]): Promise<unknown> {
    const res = await this.request(`/api/${method}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(args),
    });
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) {
      const msg = (body as { error?: unknown } | undefined)?.error;
      throw new ServiceError(typeof msg === 'string' ? msg : `HTTP ${res.status} from ${method}`, res.status);
    }
    return body;
  }

  async fetchPCM(id: number): Promise<Float32Array> {
    const res = await this.get(`/api/takes/${id}/pcm`);
    return new Float32Array(await res.arrayBuffer());
  }

  async fetchScenePCM(id: number): Promise<Float32Array> {
    const res = await this.get(`/api/scene-previews/${id}/pcm`);
    return new Float32Array(await res.arrayBuffer());
  }

  async fetchExport(id: number, format: string): Promise<TakeFile> {
    const res = await this.get(`/api/takes/${id}/export?format=${encodeURIComponent(format)}`);
    const name = /filename="?([^";]+)"?/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? `proscenium-take-${id}`;
    return { name, data: await res.blob() };
  }

  async fetchScene(project: string): Promise<SceneFile> {
    const res = await this.get(`/api/projects/${encodeURIComponent(project)}/scene`);
    const name = /filename\*?=(?:utf-8'')?"?([^";]+)"?/i.exec(res.headers.get('Content-Disposition') ?? '')?.[1];
    return {
      name: name ? decodeURIComponent(name) : `${project}.wav`,
      data: await res.blob(),
      loudness: Number(res.headers.get('X-Scene-Loudness')),
      truePeak: Number(res.headers.get('X-Scene-True-Peak')),
      limited: res.headers.get('X-Scene-Limited') === 'true',
      note: res.headers.get('X-Scene-Note') ?? '',
    };
  }

  /** GET path; rejects with the service's message when it failed. */
  private async get(path: string): Promise<Response> {
    const res = await this.request(path);
    if (!res.ok) {
      const body = (await res.json().catch(() => undefined)) as { error?: unknown } | undefined;
      throw new ServiceError(typeof body?.error === 'string' ? body.error : `HTTP ${res.status}`, res.status);
    }
    return res;
  }

  on(event: EventName, listener: (data: unknown) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    this.connect();
    return () => set.delete(listener);
  }

  onConnection(listener: (connected: boolean) => void): () => void {
    this.connectionListeners.add(listener);
    listener(this.connected);
    this.connect();
    return () => this.connectionListeners.delete(listener);
  }

  private setConnected(up: boolean) {
    if (up === this.connected) return;
    this.connected = up;
    for (const l of this.connectionListeners) l(up);
  }

  /** Closes the event socket for good. */
  close(): void {
    this.closed = true;
    this.socket?.close();
  }

  private connect(): void {
    if (this.socket || this.closed) return;
    const url = this.origin.replace(/^http/, 'ws') + '/api/events';
    // A browser cannot set headers on a WebSocket: the key travels as a
    // subprotocol the server checks (it answers "proscenium").
    const ws = this.key ? new this.deps.WebSocket(url, ['proscenium', `bearer.${this.key}`]) : new this.deps.WebSocket(url);
    this.socket = ws;
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => this.setConnected(true);
    ws.onmessage = (m: MessageEvent) => {
      if (m.data instanceof ArrayBuffer) {
        const chunk = parsePCMMessage(m.data);
        if (chunk) for (const l of this.listeners.get('pcm') ?? []) l(chunk);
        return;
      }
      let e: { name?: unknown; data?: unknown };
      try {
        e = JSON.parse(String(m.data));
      } catch {
        return;
      }
      if (typeof e.name !== 'string') return;
      for (const l of this.listeners.get(e.name) ?? []) l(e.data);
    };
    ws.onclose = () => {
      this.socket = null;
      this.setConnected(false);
      if (!this.closed) setTimeout(() => this.connect(), this.deps.reconnectMs);
    };
  }
}

interface WailsWindow {
  go?: { app?: { Service?: unknown } };
}

/** Where the browser keeps the API key for this tab's session. */
const keyStore = 'proscenium-api-key';

/** Wails injects window.go into its window; a browser has none. */
export function pickTransport(win: Window & WailsWindow = window): Transport {
  if (win.go?.app?.Service) return new WailsTransport();
  return new HttpTransport(win.location.origin, {
    apiKey: win.sessionStorage?.getItem(keyStore) ?? '',
    askKey: () => {
      const k = win.prompt('This Proscenium server needs its API key (serve --api-key):');
      if (k) win.sessionStorage?.setItem(keyStore, k);
      return k;
    },
  });
}
