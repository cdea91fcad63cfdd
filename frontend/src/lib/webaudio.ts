// Browser mode: takes play through Web Audio. Live chunks are scheduled
// back to back as they arrive (playback starts with the first chunk); a
// chunk that arrives after its slot has passed starts at once and the gap
// is counted as an underrun. One take plays live at a time, as the window's
// sound card plays one: of takes made together (Speak ×N, Speak all on the
// GPU) the first to send its start is heard, and the others are played
// from the list. Stored takes are fetched whole and played from a position
// (replay, A/B).

export interface WebPlayback {
  takeId: number;
  live: boolean;
  underruns: number;
}

export class WebAudioPlayer {
  private ctx: AudioContext | null = null;
  private gain: GainNode | null = null;
  private sources: AudioBufferSourceNode[] = [];
  private nextAt = 0;
  private startedAt = 0; // context time of take sample 0
  private offset = 0; // seconds into the take at startedAt
  current: WebPlayback | null = null;
  volume = 1;
  /** Samples of live chunks received per take, for the page's readout. */
  received = new Map<number, number>();

  constructor(private readonly rate = 44100) {}

  private context(): AudioContext {
    if (!this.ctx) {
      this.ctx = new AudioContext({ sampleRate: this.rate });
      this.gain = this.ctx.createGain();
      this.gain.gain.value = this.volume;
      this.gain.connect(this.ctx.destination);
    }
    if (this.ctx.state === 'suspended') void this.ctx.resume();
    return this.ctx;
  }

  private schedule(pcm: Float32Array, at: number, from = 0) {
    const ctx = this.context();
    const buf = ctx.createBuffer(1, pcm.length, this.rate);
    buf.copyToChannel(pcm as Float32Array<ArrayBuffer>, 0);
    const src = ctx.createBufferSource();
    src.buffer = buf;
    src.connect(this.gain!);
    src.start(at, from);
    src.onended = () => (this.sources = this.sources.filter((s) => s !== src));
    this.sources.push(src);
  }

  /**
   * Queues a live chunk of take id; a take's first chunk starts it, unless
   * another take is playing live. A take not started from its first chunk
   * is not heard live (its start was not played).
   */
  liveChunk(id: number, pcm: Float32Array) {
    const before = this.received.get(id) ?? 0;
    this.received.set(id, before + pcm.length);
    const playing = this.current?.live && this.current.takeId === id;
    if (!playing && (before > 0 || this.current?.live)) return;
    const ctx = this.context();
    if (!playing) {
      this.stop();
      this.current = { takeId: id, live: true, underruns: 0 };
      this.nextAt = ctx.currentTime + 0.02;
      this.startedAt = this.nextAt;
      this.offset = 0;
    } else if (this.nextAt < ctx.currentTime) {
      this.current!.underruns++; // playing: current is this live take
      this.nextAt = ctx.currentTime + 0.01;
    }
    this.schedule(pcm, this.nextAt);
    this.nextAt += pcm.length / this.rate;
  }

  liveEnd(id: number) {
    if (this.current?.takeId === id) this.current.live = false;
  }

  /** Plays a whole take from `at` seconds. */
  play(id: number, pcm: Float32Array, at: number) {
    this.stop();
    const ctx = this.context();
    this.current = { takeId: id, live: false, underruns: 0 };
    this.startedAt = ctx.currentTime + 0.01;
    this.offset = Math.min(Math.max(at, 0), pcm.length / this.rate);
    this.schedule(pcm, this.startedAt, this.offset);
    this.nextAt = this.startedAt + pcm.length / this.rate - this.offset;
  }

  /** Seconds into the current take. */
  position(): number {
    if (!this.ctx || !this.current) return 0;
    return Math.max(0, this.ctx.currentTime - this.startedAt + this.offset);
  }

  playing(): boolean {
    return !!this.ctx && !!this.current && (this.current.live || this.ctx.currentTime < this.nextAt);
  }

  setPaused(paused: boolean) {
    if (!this.ctx) return;
    void (paused ? this.ctx.suspend() : this.ctx.resume());
  }

  paused(): boolean {
    return this.ctx?.state === 'suspended';
  }

  setVolume(v: number) {
    this.volume = v;
    if (this.gain) this.gain.gain.value = v;
  }

  stop() {
    for (const s of this.sources) {
      try {
        s.stop();
      } catch {
        // already stopped
      }
    }
    this.sources = [];
    this.current = null;
  }
}
