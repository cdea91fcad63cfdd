// Package pcm owns the studio's audio files: WAV (16-bit PCM with
// round-to-nearest and clipping, or 32-bit IEEE float), headerless raw PCM,
// atomic file writes, and a strict WAV reader for tests and tools. Audio is
// mono at the codec's 44.1 kHz unless a caller says otherwise.
package pcm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// SampleRate is the codec's output rate in Hz.
const SampleRate = 44100

// Format is a sample encoding.
type Format int

// The encodings the studio writes.
const (
	PCM16   Format = iota + 1 // signed 16-bit little-endian, WAVE_FORMAT_PCM
	Float32                   // IEEE float little-endian, WAVE_FORMAT_IEEE_FLOAT
)

// WAVE format tags.
const (
	wavePCM   = 1
	waveFloat = 3
)

func (f Format) String() string {
	switch f {
	case PCM16:
		return "pcm16"
	case Float32:
		return "float32"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat reads "pcm16" or "float32".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "pcm16":
		return PCM16, nil
	case "float32":
		return Float32, nil
	}
	return 0, fmt.Errorf("unknown sample format %q (want pcm16 or float32)", s)
}

// BytesPerSample is 2 for PCM16 and 4 for Float32.
func (f Format) BytesPerSample() int {
	switch f {
	case PCM16:
		return 2
	case Float32:
		return 4
	}
	return 0
}

// ToPCM16 converts one sample: clip to [−1, 1], scale by 32767 and round to
// the nearest integer, ties to even (as lrintf in the default rounding mode).
func ToPCM16(x float32) int16 {
	v := math.Max(-1, math.Min(1, float64(x)))
	return int16(math.RoundToEven(v * 32767))
}

// checkFinite refuses NaN and infinities: they mean a bug upstream, and
// silently writing them (or zeros) would hide it.
func checkFinite(samples []float32) error {
	for i, x := range samples {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("sample %d is %v", i, x)
		}
	}
	return nil
}

// EncodeRaw returns the samples as headerless little-endian PCM16 or float32.
func EncodeRaw(samples []float32, f Format) ([]byte, error) {
	if f.BytesPerSample() == 0 {
		return nil, fmt.Errorf("unknown sample format %v", f)
	}
	if err := checkFinite(samples); err != nil {
		return nil, err
	}
	b := make([]byte, len(samples)*f.BytesPerSample())
	for i, x := range samples {
		if f == PCM16 {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(ToPCM16(x)))
		} else {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
	}
	return b, nil
}

// WAVHeader returns the header of a mono WAV file of n samples: RIFF, a fmt
// chunk (16 bytes for PCM16; 18 with cbSize 0 for float, plus the fact chunk
// that non-PCM formats carry), and the data chunk's header. The data follows.
func WAVHeader(n, rate int, f Format) ([]byte, error) {
	bps := f.BytesPerSample()
	if bps == 0 {
		return nil, fmt.Errorf("unknown sample format %v", f)
	}
	if rate <= 0 {
		return nil, fmt.Errorf("sample rate %d must be positive", rate)
	}
	dataLen := uint64(n) * uint64(bps)
	if n < 0 || dataLen > math.MaxUint32-64 {
		return nil, fmt.Errorf("%d samples do not fit a WAV file (4 GiB)", n)
	}
	var h bytes.Buffer
	w := func(v any) { _ = binary.Write(&h, binary.LittleEndian, v) }
	fmtLen, tag := uint32(16), uint16(wavePCM)
	if f == Float32 {
		fmtLen, tag = 18, waveFloat
	}
	riffLen := 4 + (8 + fmtLen) + 8 + uint32(dataLen)
	if f == Float32 {
		riffLen += 12 // fact chunk
	}
	h.WriteString("RIFF")
	w(riffLen)
	h.WriteString("WAVE")
	h.WriteString("fmt ")
	w(fmtLen)
	w(tag)
	w(uint16(1)) // channels
	w(uint32(rate))
	w(uint32(rate * bps)) // byte rate
	w(uint16(bps))        // block align
	w(uint16(8 * bps))    // bits per sample
	if f == Float32 {
		w(uint16(0)) // cbSize
		h.WriteString("fact")
		w(uint32(4))
		w(uint32(n)) // sample frames
	}
	h.WriteString("data")
	w(uint32(dataLen))
	return h.Bytes(), nil
}

// EncodeWAV returns a complete mono WAV file.
func EncodeWAV(samples []float32, rate int, f Format) ([]byte, error) {
	h, err := WAVHeader(len(samples), rate, f)
	if err != nil {
		return nil, err
	}
	data, err := EncodeRaw(samples, f)
	if err != nil {
		return nil, err
	}
	return append(h, data...), nil
}

// WriteWAV writes a mono WAV file atomically (see WriteFileAtomic).
func WriteWAV(path string, samples []float32, rate int, f Format) error {
	b, err := EncodeWAV(samples, rate, f)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return WriteFileAtomic(path, b)
}

// WriteRaw writes headerless PCM atomically.
func WriteRaw(path string, samples []float32, f Format) error {
	b, err := EncodeRaw(samples, f)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return WriteFileAtomic(path, b)
}
