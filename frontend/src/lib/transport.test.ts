import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpTransport, ServiceError, WailsTransport, pickTransport } from './transport';
import { createService } from './service';

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

/** A WebSocket stand-in the test drives. */
class FakeSocket {
  static last: FakeSocket | undefined;
  onmessage: ((m: MessageEvent) => void) | null = null;
  onclose: (() => void) | null = null;
  onopen: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.last = this;
  }
  send(data: unknown) {
    this.onmessage?.({ data: JSON.stringify(data) } as MessageEvent);
  }
  close() {
    this.onclose?.();
  }
}

describe('HttpTransport', () => {
  it('reports the connection: up when the socket opens, down when it drops, up again after reconnecting', async () => {
    const t = new HttpTransport('http://127.0.0.1:7860', { WebSocket: FakeSocket as unknown as typeof WebSocket, reconnectMs: 10 });
    const seen: boolean[] = [];
    t.onConnection((up) => seen.push(up));
    expect(seen).toEqual([false]); // not yet open
    FakeSocket.last!.onopen!();
    FakeSocket.last!.close();
    await new Promise((r) => setTimeout(r, 30)); // reconnects
    FakeSocket.last!.onopen!();
    expect(seen).toEqual([false, true, false, true]);
    t.close();
  });

  it('posts the arguments as a JSON array to /api/<Method>', async () => {
    const fetch = vi.fn(async () => jsonResponse(200, { id: 1, state: 'running' }));
    const svc = createService(new HttpTransport('http://127.0.0.1:7860', { fetch }));
    const req = { text: 'Hi.', sampling: { temperature: 1, top_p: 0.9, top_k: 30 }, seed: 0, max_frames: 10 };
    await expect(svc.speak(req)).resolves.toEqual({ id: 1, state: 'running' });
    expect(fetch).toHaveBeenCalledWith('http://127.0.0.1:7860/api/Speak', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify([req]),
    });
  });

  it('downloads a scene with its name (UTF-8 too) and what it measures', async () => {
    const fetch = vi.fn(
      async () =>
        new Response(new Uint8Array([82, 73, 70, 70]), {
          status: 200,
          headers: { 'Content-Disposition': "attachment; filename*=utf-8''Sc%C3%A8ne%201.wav", 'X-Scene-Loudness': '-16.02', 'X-Scene-True-Peak': '-7.40', 'X-Scene-Limited': 'false', 'X-Scene-Note': "line 2's file -0.3 dB under the scene's gain" },
        }),
    );
    const svc = createService(new HttpTransport('http://127.0.0.1:7860', { fetch }));
    const f = await svc.sceneFile('Scène 1');
    expect(fetch).toHaveBeenCalledWith('http://127.0.0.1:7860/api/projects/Sc%C3%A8ne%201/scene', {});
    expect([f.name, f.loudness, f.truePeak, f.limited, f.note, f.data.size]).toEqual(['Scène 1.wav', -16.02, -7.4, false, "line 2's file -0.3 dB under the scene's gain", 4]);
  });

  it("rejects with the service's own message and status", async () => {
    const fetch = vi.fn(async () => jsonResponse(409, { error: 'no model loaded' }));
    const svc = createService(new HttpTransport('', { fetch }));
    const err = await svc.stats().catch((e) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.message).toBe('no model loaded');
    expect(err.status).toBe(409);
  });

  it('says when the server cannot be reached', async () => {
    const fetch = vi.fn(async () => {
      throw new TypeError('Failed to fetch');
    });
    await expect(new HttpTransport('', { fetch }).call('Stats', [])).rejects.toThrow(/cannot reach the Proscenium server: Failed to fetch/);
  });

  it('delivers WebSocket events to listeners by name and reconnects', async () => {
    vi.useFakeTimers();
    const t = new HttpTransport('http://127.0.0.1:9', {
      fetch: vi.fn(),
      WebSocket: FakeSocket as unknown as new (url: string) => WebSocket,
      reconnectMs: 50,
    });
    const models: unknown[] = [];
    const off = t.on('model', (d) => models.push(d));
    const first = FakeSocket.last!;
    expect(first.url).toBe('ws://127.0.0.1:9/api/events');
    first.send({ name: 'model', data: { state: 'loading' } });
    first.send({ name: 'take', data: { id: 1 } });
    expect(models).toEqual([{ state: 'loading' }]);

    first.close();
    vi.advanceTimersByTime(50);
    const second = FakeSocket.last!;
    expect(second).not.toBe(first);
    second.send({ name: 'model', data: { state: 'loaded' } });
    off();
    second.send({ name: 'model', data: { state: 'none' } });
    expect(models).toEqual([{ state: 'loading' }, { state: 'loaded' }]);
    t.close();
    vi.useRealTimers();
  });
});

describe('HttpTransport with an API key', () => {
  it('asks for the key once after a 401 and sends it as a Bearer token', async () => {
    const seen: (string | undefined)[] = [];
    const fetch = vi.fn(async (_url: string, init?: RequestInit) => {
      const auth = (init?.headers as Record<string, string> | undefined)?.Authorization;
      seen.push(auth);
      return auth === 'Bearer k3y-for-tests' ? jsonResponse(200, { loaded: false }) : jsonResponse(401, { error: 'this server needs its API key' });
    });
    const askKey = vi.fn(() => 'k3y-for-tests');
    const t = new HttpTransport('', { fetch: fetch as unknown as typeof globalThis.fetch, askKey });
    await expect(t.call('Stats', [])).resolves.toEqual({ loaded: false });
    await expect(t.call('Stats', [])).resolves.toEqual({ loaded: false });
    expect(askKey).toHaveBeenCalledTimes(1);
    expect(seen).toEqual([undefined, 'Bearer k3y-for-tests', 'Bearer k3y-for-tests']);
  });

  it('gives up with the 401 when the user declines', async () => {
    const fetch = vi.fn(async () => jsonResponse(401, { error: 'this server needs its API key' }));
    const t = new HttpTransport('', { fetch, askKey: () => null });
    await expect(t.call('Stats', [])).rejects.toThrow('this server needs its API key');
  });

  it('offers the key to the event socket as a subprotocol', () => {
    const made: { url: string; protocols?: string[] }[] = [];
    class KeySocket extends FakeSocket {
      constructor(url: string, protocols?: string[]) {
        super(url);
        made.push({ url, protocols });
      }
    }
    const t = new HttpTransport('http://127.0.0.1:9', {
      fetch: vi.fn(),
      WebSocket: KeySocket as unknown as new (url: string, protocols?: string[]) => WebSocket,
      apiKey: 'k3y-for-tests',
    });
    t.on('model', () => {});
    expect(made).toEqual([{ url: 'ws://127.0.0.1:9/api/events', protocols: ['proscenium', 'bearer.k3y-for-tests'] }]);
    t.close();
  });
});

describe('WailsTransport', () => {
  afterEach(() => {
    delete (window as unknown as { go?: unknown }).go;
  });

  it('calls the bound Go method and turns its rejection into a ServiceError', async () => {
    const Speak = vi.fn(async () => {
      throw 'no model loaded'; // Wails rejects with the Go error's text
    });
    const Stats = vi.fn(async () => ({ loaded: false }));
    (window as unknown as { go: unknown }).go = { app: { Service: { Speak, Stats } } };
    const t = pickTransport();
    expect(t).toBeInstanceOf(WailsTransport);
    await expect(t.call('Stats', [])).resolves.toEqual({ loaded: false });
    const req = { text: 'x' };
    const err = (await t.call('Speak', [req]).catch((e: unknown) => e)) as ServiceError;
    expect(Speak).toHaveBeenCalledWith(req);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.message).toBe('no model loaded');
  });

  it('a browser without window.go gets HTTP to its own origin', () => {
    const t = pickTransport();
    expect(t.kind).toBe('http');
  });
});
