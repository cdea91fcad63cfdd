// Package decode reads audio files into float32 samples: WAV (integer PCM
// of 8 to 32 bits, float32/64, WAVE_FORMAT_EXTENSIBLE), FLAC (mewkiz/flac),
// MP3 (libmpg123) and Ogg Opus (libopusfile). It owns the reading of
// user-supplied recordings (reference voices): every decode has a budget
// fixed from the file's declaration (budget.go), and ReadReference runs in
// a child process with an address-space and a time limit when the program
// serves one (worker.go). The take's own output goes through engine/audio/pcm
// and engine/audio/encode.
package decode

import (
	"bytes"
	"errors"
	"fmt"
)

// PCM is decoded audio: interleaved samples, nominally in [−1, 1].
type PCM struct {
	Rate     int
	Channels int
	Samples  []float32 // frame-major: sample c of frame i at Samples[i·Channels+c]
}

// Frames is the number of sample frames (samples per channel).
func (p *PCM) Frames() int { return len(p.Samples) / p.Channels }

// Seconds is the duration.
func (p *PCM) Seconds() float64 { return float64(p.Frames()) / float64(p.Rate) }

// Mono averages the channels.
func (p *PCM) Mono() []float32 {
	if p.Channels == 1 {
		return append([]float32(nil), p.Samples...)
	}
	out := make([]float32, p.Frames())
	inv := 1 / float32(p.Channels)
	for i := range out {
		var s float32
		for _, v := range p.Samples[i*p.Channels : (i+1)*p.Channels] {
			s += v
		}
		out[i] = s * inv
	}
	return out
}

// ErrTooLong is returned (wrapped) when a file decodes to more than the
// caller's limit in seconds: decoding stops there, so a small file that
// expands to hours of audio costs nothing.
var ErrTooLong = errors.New("audio is too long")

// Format names a container the package reads.
type Format string

const (
	WAV  Format = "WAV"
	FLAC Format = "FLAC"
	MP3  Format = "MP3"
	Opus Format = "Ogg Opus"
)

// Sniff names the format of a file from its first bytes, or returns an error
// naming what it is not.
func Sniff(b []byte) (Format, error) {
	switch {
	case len(b) >= 12 && string(b[0:4]) == "RIFF" && string(b[8:12]) == "WAVE":
		return WAV, nil
	case len(b) >= 4 && string(b[0:4]) == "fLaC":
		return FLAC, nil
	case len(b) >= 4 && string(b[0:4]) == "OggS":
		if bytes.Contains(b[:min(len(b), 512)], []byte("OpusHead")) {
			return Opus, nil
		}
		if bytes.Contains(b[:min(len(b), 512)], []byte("\x01vorbis")) {
			return "", fmt.Errorf("Ogg Vorbis is not supported (WAV, FLAC, MP3 and Ogg Opus are)")
		}
		return "", fmt.Errorf("an Ogg file without an Opus stream (WAV, FLAC, MP3 and Ogg Opus are supported)")
	case len(b) >= 3 && string(b[0:3]) == "ID3",
		len(b) >= 2 && b[0] == 0xFF && b[1]&0xE0 == 0xE0:
		return MP3, nil
	case len(b) >= 4 && string(b[0:4]) == "RIFF":
		return "", fmt.Errorf("a RIFF file that is not WAVE")
	case len(b) == 0:
		return "", fmt.Errorf("the file is empty")
	}
	return "", fmt.Errorf("not a WAV, FLAC, MP3 or Ogg Opus file")
}

// Decode sniffs the format and decodes the file within a budget fixed from
// its declaration before the first sample (see budget): a rate above
// MaxRate or more than MaxChannels is refused (*LimitError), and decoding
// stops with ErrTooLong past maxSeconds of audio (0 < maxSeconds ≤ 3600). A
// decoder library that panics on a malformed file yields an error instead
// (a C library's crash cannot be caught: ReadReference decodes in a child
// process for that).
func Decode(b []byte, maxSeconds float64) (pcm *PCM, f Format, err error) {
	f, err = Sniff(b)
	if err != nil {
		return nil, "", err
	}
	defer func() {
		if r := recover(); r != nil {
			pcm, err = nil, fmt.Errorf("%s: the decoder failed on this file (%v)", f, r)
		}
	}()
	switch f {
	case WAV:
		pcm, err = decodeWAV(b, maxSeconds)
	case FLAC:
		pcm, err = decodeFLAC(b, maxSeconds)
	case MP3:
		pcm, err = decodeMP3(b, maxSeconds)
	case Opus:
		pcm, err = decodeOpus(b, maxSeconds)
	}
	if err != nil {
		return nil, f, fmt.Errorf("%s: %w", f, err)
	}
	if pcm.Channels < 1 || pcm.Rate < 1 {
		return nil, f, fmt.Errorf("%s: %d channels at %d Hz", f, pcm.Channels, pcm.Rate)
	}
	return pcm, f, nil
}
