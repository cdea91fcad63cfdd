package model

import (
	"fmt"
	"sync"

	"proscenium/app/voicelib"
	"proscenium/engine/api"
	"proscenium/engine/drama3"
	"proscenium/engine/open"
)

// This file encodes reference recordings (voices to clone) with the loaded
// model's codec: the voice library and the speech API's ref_audio and
// references use it. An engine that encodes references itself (the GPU
// worker's, on the device) does so; otherwise, or when it fails, the CPU
// encoder of the same codec.pth (asked of engine/open) does. Both give the
// same codes up to near-ties (docs/PERF.md, "GPU voices"), and the library
// names them by the codec's id either way.

// refCodec is one model directory's codec: its id and, once needed, its CPU
// encoder.
type refCodec struct {
	dir, id string

	once sync.Once
	cpu  *voicelib.CPUEncoder
	err  error
}

func (c *refCodec) cpuEncoder() (*voicelib.CPUEncoder, error) {
	c.once.Do(func() {
		if c.cpu, c.err = voicelib.LoadCPUEncoder(drama3.CodecPath(c.dir)); c.err != nil {
			c.err = fmt.Errorf("the model's codec cannot encode references: %w", c.err)
		}
	})
	return c.cpu, c.err
}

// refCodecs caches the codec of the last model directory used.
type refCodecs struct {
	mu  sync.Mutex
	cur *refCodec
}

// ReferenceEncoder returns the loaded model's codec encoder: the engine's
// when it encodes references, else the CPU's.
func (c *Control) ReferenceEncoder() (voicelib.Encoder, error) {
	eng, err := c.Loaded()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	dir := c.status.Dir
	c.mu.Unlock()
	c.codecs.mu.Lock()
	rc := c.codecs.cur
	c.codecs.mu.Unlock()
	if rc == nil || rc.dir != dir {
		id, err := voicelib.CodecFileID(drama3.CodecPath(dir))
		if err != nil {
			return nil, fmt.Errorf("the model's codec cannot encode references: %w", err)
		}
		rc = &refCodec{dir: dir, id: id}
		c.codecs.mu.Lock()
		c.codecs.cur = rc
		c.codecs.mu.Unlock()
	}
	if re, ok := eng.(api.ReferenceEncoder); ok {
		info := eng.Info()
		return engineEncoder{eng: re, codebooks: info.Codebooks, samplesPerFrame: info.SamplesPerFrame, codec: rc}, nil
	}
	return rc.cpuEncoder()
}

// engineEncoder encodes with the engine, and with the CPU encoder of the
// same codec when the engine cannot (a worker that died, a memory cap).
type engineEncoder struct {
	eng                        api.ReferenceEncoder
	codebooks, samplesPerFrame int
	codec                      *refCodec
}

func (e engineEncoder) EncodeReference(audio []float32) ([]int32, int, error) {
	// Bad audio is refused here, not retried on the CPU.
	if e.samplesPerFrame > 0 {
		if err := open.CheckReferenceAudio(audio, e.samplesPerFrame); err != nil {
			return nil, 0, err
		}
	}
	codes, frames, err := e.eng.EncodeReference(audio)
	if err == nil {
		return codes, frames, nil
	}
	c, cerr := e.codec.cpuEncoder()
	if cerr != nil {
		return nil, 0, fmt.Errorf("%w (and on the CPU: %w)", err, cerr)
	}
	return c.EncodeReference(audio)
}

func (e engineEncoder) Codebooks() int { return e.codebooks }
func (e engineEncoder) ID() string     { return e.codec.id }

// EncodeReference reads a recording (WAV, FLAC, MP3 or Ogg Opus, 2–30 s,
// not silent) and returns its codes from the loaded model's codec, one []int
// per frame.
func (c *Control) EncodeReference(recording []byte) ([][]int, error) {
	enc, err := c.ReferenceEncoder()
	if err != nil {
		return nil, err
	}
	if len(recording) > voicelib.MaxAudioBytes {
		return nil, fmt.Errorf("the recording is %d bytes, more than the limit of %d", len(recording), voicelib.MaxAudioBytes)
	}
	return voicelib.EncodeRecording(enc, recording)
}
