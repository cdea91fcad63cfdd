// Package encode turns the engine's mono float32 PCM into the speech API's
// response formats — mp3 (libmp3lame), Ogg Opus (libopusenc), AAC in ADTS
// (libfdk-aac), FLAC (github.com/mewkiz/flac), WAV and raw PCM16 — chunk by
// chunk, writing each codec's output as soon as the codec emits it. The
// codecs are the libraries'; this package only feeds them and frames their
// output.
package encode

import (
	"fmt"
	"io"

	"proscenium/engine/audio/pcm"
)

// Format is a response format, named as OpenAI's response_format names it.
type Format string

// The formats.
const (
	MP3  Format = "mp3"
	Opus Format = "opus"
	AAC  Format = "aac"
	FLAC Format = "flac"
	WAV  Format = "wav"
	PCM  Format = "pcm"
)

// Formats lists every format, OpenAI's default (mp3) first.
func Formats() []Format { return []Format{MP3, Opus, AAC, FLAC, WAV, PCM} }

// Lookup returns the format named s.
func Lookup(s string) (Format, bool) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, true
		}
	}
	return "", false
}

// ContentType is the format's media type: the registered ones (audio/mpeg,
// RFC 3003; audio/ogg with codecs=opus, RFC 7845; audio/aac for ADTS;
// audio/flac), audio/wav as browsers and OpenAI send it, and for headerless
// little-endian PCM16 (which no registered type describes: audio/L16 is
// big-endian) a type that states rate, channels and sample format.
func (f Format) ContentType(rate int) string {
	switch f {
	case MP3:
		return "audio/mpeg"
	case Opus:
		return "audio/ogg; codecs=opus"
	case AAC:
		return "audio/aac"
	case FLAC:
		return "audio/flac"
	case WAV:
		return "audio/wav"
	}
	return fmt.Sprintf("audio/pcm;rate=%d;channels=1;format=s16le", rate)
}

// Rates reports whether the format can carry audio at rate Hz; every
// format carries the speech API's rates (16, 22.05, 24, 44.1 and 48 kHz).
func (f Format) Rates(rate int) bool {
	switch rate {
	case 16000, 22050, 24000, 44100, 48000:
		return true
	}
	return false
}

// Encoder encodes mono float32 PCM in [-1, 1] at one sample rate.
type Encoder interface {
	// Write encodes samples, writing what the codec emits. NaN or
	// infinite samples are refused.
	Write(pcm []float32) error
	// Close flushes the codec's tail and frees it; it does not close the
	// writer. When the writer is an io.WriteSeeker (a whole reply, see
	// Buffer), Close also fills in what a stream cannot know in advance:
	// the WAV sizes, FLAC's sample count and MD5, mp3's LAME tag.
	Close() error
}

// New returns an encoder of format f at rate Hz writing to w.
func New(w io.Writer, f Format, rate int) (Encoder, error) {
	if !f.Rates(rate) {
		return nil, fmt.Errorf("%s cannot carry %d Hz", f, rate)
	}
	var (
		e   Encoder
		err error
	)
	switch f {
	case MP3:
		e, err = newMP3(w, rate)
	case Opus:
		e, err = newOpus(w, rate)
	case AAC:
		e, err = newAAC(w, rate)
	case FLAC:
		e, err = newFLAC(w, rate)
	case WAV:
		e, err = newWAV(w, rate)
	case PCM:
		e = &pcmEncoder{w: w}
	default:
		return nil, fmt.Errorf("unknown format %q", f)
	}
	if err != nil {
		return nil, fmt.Errorf("%s encoder: %w", f, err)
	}
	return finiteOnly{e}, nil
}

// finiteOnly checks every chunk before the codec sees it.
type finiteOnly struct{ Encoder }

func (e finiteOnly) Write(samples []float32) error {
	if err := pcm.CheckFinite(samples); err != nil {
		return err
	}
	return e.Encoder.Write(samples)
}

// Encode encodes a whole take into a seekable buffer, so every header is
// exact.
func Encode(f Format, rate int, pcm []float32) ([]byte, error) {
	var b Buffer
	e, err := New(&b, f, rate)
	if err != nil {
		return nil, err
	}
	if err := e.Write(pcm); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// toPCM16 converts samples as engine/audio/pcm does (clip, scale by 32767,
// round half to even).
func toPCM16(dst []int16, src []float32) []int16 {
	dst = dst[:0]
	for _, x := range src {
		dst = append(dst, pcm.ToPCM16(x))
	}
	return dst
}
