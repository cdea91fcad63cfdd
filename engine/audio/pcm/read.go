package pcm

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
)

// WAV is a decoded WAV file.
type WAV struct {
	Rate     int
	Channels int
	Format   Format
	// Samples are interleaved, as float32: PCM16 values divided by 32767
	// (the inverse of ToPCM16's scale), float values as stored.
	Samples []float32
	// Raw is the data chunk's bytes, for exact comparisons.
	Raw []byte
}

// ReadWAVFile reads a WAV file; see ParseWAV.
func ReadWAVFile(path string) (*WAV, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	w, err := ParseWAV(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// ParseWAV decodes a RIFF/WAVE image holding 16-bit PCM or 32-bit float
// samples. It checks the chunk sizes against the image, the fmt fields
// against each other, and skips unknown chunks (LIST, fact).
func ParseWAV(b []byte) (*WAV, error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, fmt.Errorf("not a RIFF/WAVE file")
	}
	if riff := binary.LittleEndian.Uint32(b[4:]); uint64(riff)+8 != uint64(len(b)) {
		return nil, fmt.Errorf("RIFF size %d does not match the file's %d bytes", riff, len(b))
	}
	var (
		w      WAV
		gotFmt bool
		data   []byte
	)
	for off := 12; off < len(b); {
		if len(b)-off < 8 {
			return nil, fmt.Errorf("truncated chunk header at offset %d", off)
		}
		id, size := string(b[off:off+4]), uint64(binary.LittleEndian.Uint32(b[off+4:]))
		body := off + 8
		if size > uint64(len(b)-body) {
			return nil, fmt.Errorf("chunk %q at offset %d: size %d runs past the end", id, off, size)
		}
		chunk := b[body : body+int(size)]
		switch id {
		case "fmt ":
			if len(chunk) < 16 {
				return nil, fmt.Errorf("fmt chunk of %d bytes", len(chunk))
			}
			tag := binary.LittleEndian.Uint16(chunk[0:])
			w.Channels = int(binary.LittleEndian.Uint16(chunk[2:]))
			w.Rate = int(binary.LittleEndian.Uint32(chunk[4:]))
			byteRate := binary.LittleEndian.Uint32(chunk[8:])
			align := binary.LittleEndian.Uint16(chunk[12:])
			bits := binary.LittleEndian.Uint16(chunk[14:])
			switch {
			case tag == wavePCM && bits == 16:
				w.Format = PCM16
			case tag == waveFloat && bits == 32:
				w.Format = Float32
			default:
				return nil, fmt.Errorf("format tag %d with %d bits per sample is not supported", tag, bits)
			}
			if w.Channels < 1 || w.Rate < 1 || int(align) != w.Channels*w.Format.BytesPerSample() || int(byteRate) != w.Rate*int(align) {
				return nil, fmt.Errorf("inconsistent fmt chunk (channels %d, rate %d, byte rate %d, block align %d)", w.Channels, w.Rate, byteRate, align)
			}
			gotFmt = true
		case "data":
			if data != nil {
				return nil, fmt.Errorf("second data chunk at offset %d", off)
			}
			data = chunk
		}
		off = body + int(size) + int(size&1) // chunks are padded to even sizes
	}
	if !gotFmt || data == nil {
		return nil, fmt.Errorf("missing fmt or data chunk")
	}
	bps := w.Format.BytesPerSample()
	if len(data)%(bps*w.Channels) != 0 {
		return nil, fmt.Errorf("data chunk of %d bytes is not whole %d-byte frames", len(data), bps*w.Channels)
	}
	w.Raw = data
	w.Samples = make([]float32, len(data)/bps)
	for i := range w.Samples {
		if w.Format == PCM16 {
			w.Samples[i] = float32(int16(binary.LittleEndian.Uint16(data[2*i:]))) / 32767
		} else {
			w.Samples[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	}
	return &w, nil
}
