package decode

import (
	"encoding/binary"
	"fmt"
	"math"
)

// WAVE format tags.
const (
	wavePCM        = 1
	waveFloat      = 3
	waveExtensible = 0xFFFE
)

// decodeWAV reads a RIFF/WAVE image: integer PCM of 8 (unsigned), 16, 24 or
// 32 bits, IEEE float of 32 or 64 bits, either directly or as
// WAVE_FORMAT_EXTENSIBLE. Unknown chunks are skipped. A data chunk whose
// size runs past the end of the file (streaming writers leave 0xFFFFFFFF
// there) is read up to the last whole frame.
func decodeWAV(b []byte, maxSeconds float64) (*PCM, error) {
	var (
		p            PCM
		tag, bits    int
		align        int
		gotFmt       bool
		data         []byte
		haveDataSize bool
	)
	for off := 12; off+8 <= len(b); {
		id, size := string(b[off:off+4]), uint64(binary.LittleEndian.Uint32(b[off+4:]))
		body := off + 8
		if size > uint64(len(b)-body) {
			if id != "data" {
				return nil, fmt.Errorf("chunk %q at offset %d: size %d runs past the end of the file", id, off, size)
			}
			size = uint64(len(b) - body)
		}
		chunk := b[body : body+int(size)]
		switch id {
		case "fmt ":
			if len(chunk) < 16 {
				return nil, fmt.Errorf("fmt chunk of %d bytes", len(chunk))
			}
			tag = int(binary.LittleEndian.Uint16(chunk[0:]))
			p.Channels = int(binary.LittleEndian.Uint16(chunk[2:]))
			p.Rate = int(binary.LittleEndian.Uint32(chunk[4:]))
			align = int(binary.LittleEndian.Uint16(chunk[12:]))
			bits = int(binary.LittleEndian.Uint16(chunk[14:]))
			if tag == waveExtensible {
				if len(chunk) < 40 {
					return nil, fmt.Errorf("extensible fmt chunk of %d bytes", len(chunk))
				}
				// The sub-format GUID starts with the format tag.
				tag = int(binary.LittleEndian.Uint16(chunk[24:]))
			}
			gotFmt = true
		case "data":
			if haveDataSize {
				return nil, fmt.Errorf("second data chunk at offset %d", off)
			}
			data, haveDataSize = chunk, true
		}
		off = body + int(size) + int(size&1) // chunks are padded to even sizes
	}
	if !gotFmt || !haveDataSize {
		return nil, fmt.Errorf("missing fmt or data chunk")
	}
	var sample func([]byte) float32
	switch {
	case tag == wavePCM && bits == 8:
		sample = func(x []byte) float32 { return (float32(x[0]) - 128) / 128 }
	case tag == wavePCM && bits == 16:
		sample = func(x []byte) float32 { return float32(int16(binary.LittleEndian.Uint16(x))) / (1 << 15) }
	case tag == wavePCM && bits == 24:
		sample = func(x []byte) float32 {
			return float32(int32(uint32(x[0])<<8|uint32(x[1])<<16|uint32(x[2])<<24)>>8) / (1 << 23)
		}
	case tag == wavePCM && bits == 32:
		sample = func(x []byte) float32 { return float32(float64(int32(binary.LittleEndian.Uint32(x))) / (1 << 31)) }
	case tag == waveFloat && bits == 32:
		sample = func(x []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(x)) }
	case tag == waveFloat && bits == 64:
		sample = func(x []byte) float32 { return float32(math.Float64frombits(binary.LittleEndian.Uint64(x))) }
	default:
		return nil, fmt.Errorf("format tag %d with %d bits per sample is not supported (integer PCM of 8, 16, 24 or 32 bits and float of 32 or 64 bits are)", tag, bits)
	}
	if err := checkDeclared(p.Rate, p.Channels); err != nil {
		return nil, err
	}
	bps := bits / 8
	if align != p.Channels*bps {
		return nil, fmt.Errorf("inconsistent fmt chunk (channels %d, rate %d, block align %d, %d bits)", p.Channels, p.Rate, align, bits)
	}
	frames := len(data) / max(align, 1)
	bud, err := newBudget(p.Rate, p.Channels, int64(frames), maxSeconds)
	if err != nil {
		return nil, err
	}
	dst, err := bud.take(frames)
	if err != nil {
		return nil, err
	}
	p.Samples = dst
	for i := range p.Samples {
		v := sample(data[i*bps:])
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("sample %d is not finite", i)
		}
		p.Samples[i] = v
	}
	return &p, nil
}
