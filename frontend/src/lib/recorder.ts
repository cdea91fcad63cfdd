// Recording a voice in the page: the microphone through Web Audio, kept as
// float samples and written as a 16-bit mono WAV (MediaRecorder's WebM is
// not a format the voice library reads).

export interface RecordedWav {
  bytes: Uint8Array;
  seconds: number;
}

export class Recorder {
  private chunks: Float32Array[] = [];
  private constructor(
    private ctx: AudioContext,
    private stream: MediaStream,
    private node: ScriptProcessorNode,
  ) {}

  static async start(): Promise<Recorder> {
    if (!navigator.mediaDevices?.getUserMedia) throw new Error('this page cannot use the microphone (getUserMedia is missing)');
    const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false } });
    const ctx = new AudioContext();
    const src = ctx.createMediaStreamSource(stream);
    const node = ctx.createScriptProcessor(4096, 1, 1);
    const r = new Recorder(ctx, stream, node);
    node.onaudioprocess = (e) => r.chunks.push(new Float32Array(e.inputBuffer.getChannelData(0)));
    src.connect(node);
    node.connect(ctx.destination);
    return r;
  }

  stop(): RecordedWav {
    this.node.disconnect();
    this.stream.getTracks().forEach((t) => t.stop());
    const rate = this.ctx.sampleRate;
    void this.ctx.close();
    const n = this.chunks.reduce((a, c) => a + c.length, 0);
    const pcm = new Float32Array(n);
    let at = 0;
    for (const c of this.chunks) {
      pcm.set(c, at);
      at += c.length;
    }
    return { bytes: encodeWav16(pcm, rate), seconds: n / rate };
  }
}

/** A 16-bit mono PCM WAV of samples in [−1, 1] (clipped). */
export function encodeWav16(pcm: Float32Array, rate: number): Uint8Array {
  const buf = new ArrayBuffer(44 + 2 * pcm.length);
  const v = new DataView(buf);
  const str = (o: number, s: string) => [...s].forEach((ch, i) => v.setUint8(o + i, ch.charCodeAt(0)));
  str(0, 'RIFF');
  v.setUint32(4, 36 + 2 * pcm.length, true);
  str(8, 'WAVEfmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 1, true); // mono
  v.setUint32(24, rate, true);
  v.setUint32(28, rate * 2, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  str(36, 'data');
  v.setUint32(40, 2 * pcm.length, true);
  for (let i = 0; i < pcm.length; i++) {
    const x = Math.max(-1, Math.min(1, pcm[i]));
    v.setInt16(44 + 2 * i, Math.round(x * 32767), true);
  }
  return new Uint8Array(buf);
}

export function bytesToBase64(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}

export function base64ToBytes(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
