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
  /** A take's PCM, float32 mono (browser mode only). */
  fetchPCM(id: number): Promise<Float32Array>;
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

  fetchPCM(): Promise<Float32Array> {
    // The window plays through the sound card (Service.Play), not Web Audio.
    return Promise.reject(new ServiceError('the desktop window plays takes through the sound card'));
  }
}

export interface HttpDeps {
  fetch: typeof fetch;
  WebSocket: new (url: string) => WebSocket;
  /** Delay before reconnecting the event socket, in ms. */
  reconnectMs: number;
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

  constructor(
    private readonly origin: string,
    deps: Partial<HttpDeps> = {},
  ) {
    this.deps = {
      fetch: deps.fetch ?? globalThis.fetch.bind(globalThis),
      WebSocket: deps.WebSocket ?? globalThis.WebSocket,
      reconnectMs: deps.reconnectMs ?? 1000,
    };
  }

  async call(method: MethodName, args: unknown[]): Promise<unknown> {
    let res: Response;
    try {
      res = await this.deps.fetch(`${this.origin}/api/${method}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(args),
      });
    } catch (e) {
      throw new ServiceError(`cannot reach the Proscenium server: ${e instanceof Error ? e.message : e}`);
    }
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) {
      const msg = (body as { error?: unknown } | undefined)?.error;
      throw new ServiceError(typeof msg === 'string' ? msg : `HTTP ${res.status} from ${method}`, res.status);
    }
    return body;
  }

  async fetchPCM(id: number): Promise<Float32Array> {
    const res = await this.deps.fetch(`${this.origin}/api/takes/${id}/pcm`);
    if (!res.ok) {
      const body = (await res.json().catch(() => undefined)) as { error?: unknown } | undefined;
      throw new ServiceError(typeof body?.error === 'string' ? body.error : `HTTP ${res.status}`, res.status);
    }
    return new Float32Array(await res.arrayBuffer());
  }

  on(event: EventName, listener: (data: unknown) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    this.connect();
    return () => set.delete(listener);
  }

  /** Closes the event socket for good. */
  close(): void {
    this.closed = true;
    this.socket?.close();
  }

  private connect(): void {
    if (this.socket || this.closed) return;
    const url = this.origin.replace(/^http/, 'ws') + '/api/events';
    const ws = new this.deps.WebSocket(url);
    this.socket = ws;
    ws.binaryType = 'arraybuffer';
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
      if (!this.closed) setTimeout(() => this.connect(), this.deps.reconnectMs);
    };
  }
}

interface WailsWindow {
  go?: { app?: { Service?: unknown } };
}

/** Wails injects window.go into its window; a browser has none. */
export function pickTransport(win: Window & WailsWindow = window): Transport {
  return win.go?.app?.Service ? new WailsTransport() : new HttpTransport(win.location.origin);
}
