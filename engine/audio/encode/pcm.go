package encode

import (
	"encoding/binary"
	"io"
	"math"

	"proscenium/engine/audio/pcm"
)

// pcmEncoder writes headerless little-endian PCM16.
type pcmEncoder struct {
	w io.Writer
	n int // samples written
}

func (e *pcmEncoder) Write(samples []float32) error {
	b, err := pcm.EncodeRaw(samples, pcm.PCM16)
	if err != nil {
		return err
	}
	e.n += len(samples)
	_, err = e.w.Write(b)
	return err
}

func (e *pcmEncoder) Close() error { return nil }

// wavEncoder writes a PCM16 WAV file. A stream cannot know its length, so
// the header first declares the largest sizes (decoders read such a file to
// its end, as they do ffmpeg's piped WAV); on a seekable writer Close
// rewrites the header with the true sizes.
type wavEncoder struct {
	pcmEncoder
	rate int
}

func newWAV(w io.Writer, rate int) (Encoder, error) {
	h, err := pcm.WAVHeader(0, rate, pcm.PCM16)
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint32(h[4:], math.MaxUint32)        // RIFF size
	binary.LittleEndian.PutUint32(h[len(h)-4:], math.MaxUint32) // data size
	if _, err := w.Write(h); err != nil {
		return nil, err
	}
	return &wavEncoder{pcmEncoder: pcmEncoder{w: w}, rate: rate}, nil
}

func (e *wavEncoder) Close() error {
	ws, ok := e.w.(io.WriteSeeker)
	if !ok {
		return nil
	}
	h, err := pcm.WAVHeader(e.n, e.rate, pcm.PCM16)
	if err != nil {
		return err
	}
	if _, err := ws.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := ws.Write(h); err != nil {
		return err
	}
	_, err = ws.Seek(0, io.SeekEnd)
	return err
}
