package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The testdata files are one synthetic voiced signal (2.5 s, 44.1 kHz mono,
// 16-bit) as written by ffmpeg: ref.wav, and from it ref.flac, ref.mp3
// (libmp3lame 64 kb/s), ref.opus (libopus 32 kb/s), ref.ogg (Vorbis) and
// ref-mp3.flac (ref.mp3 as ffmpeg decodes it, 24-bit FLAC).

// TestDecodeLossless: the FLAC decodes to exactly the WAV's samples.
func TestDecodeLossless(t *testing.T) {
	w, f, err := Decode(readTestdata(t, "ref.wav"), 60)
	if err != nil || f != WAV {
		t.Fatalf("wav: %v %v", f, err)
	}
	fl, f, err := Decode(readTestdata(t, "ref.flac"), 60)
	if err != nil || f != FLAC {
		t.Fatalf("flac: %v %v", f, err)
	}
	if w.Rate != 44100 || w.Channels != 1 || w.Frames() != 110250 {
		t.Fatalf("wav: %d Hz, %d channels, %d frames", w.Rate, w.Channels, w.Frames())
	}
	if fl.Rate != w.Rate || fl.Channels != w.Channels || len(fl.Samples) != len(w.Samples) {
		t.Fatalf("flac: %d Hz, %d channels, %d samples", fl.Rate, fl.Channels, len(fl.Samples))
	}
	for i := range w.Samples {
		if w.Samples[i] != fl.Samples[i] {
			t.Fatalf("sample %d: flac %g, wav %g", i, fl.Samples[i], w.Samples[i])
		}
	}
}

// TestDecodeLossy: MP3 and Opus decode to the signal (libmpg123 removes
// the encoder's delay from the LAME header), within a lossy codec's error.
func TestDecodeLossy(t *testing.T) {
	ref, _, err := Decode(readTestdata(t, "ref.wav"), 60)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file     string
		f        Format
		rate, ch int
	}{{"ref.mp3", MP3, 44100, 1}, {"ref.opus", Opus, 48000, 2}} {
		p, f, err := Decode(readTestdata(t, tc.file), 60)
		if err != nil || f != tc.f {
			t.Fatalf("%s: %v %v", tc.file, f, err)
		}
		if p.Rate != tc.rate || p.Channels != tc.ch {
			t.Errorf("%s: %d Hz, %d channels", tc.file, p.Rate, p.Channels)
		}
		if d := p.Seconds(); d < 2.49 || d > 2.6 {
			t.Errorf("%s: %.3f s, want 2.5 s (plus any padding the codec keeps)", tc.file, d)
		}
		if tc.rate != 44100 {
			continue // compared after resampling in the reference tests
		}
		// Best correlation with the original over the codec's delay.
		mono := p.Mono()
		best, bestLag := 0.0, 0
		for lag := 0; lag < 3000; lag++ {
			var xy, xx, yy float64
			for i := 10000; i < 100000; i++ {
				x, y := float64(ref.Samples[i]), float64(mono[i+lag])
				xy, xx, yy = xy+x*y, xx+x*x, yy+y*y
			}
			if c := xy / math.Sqrt(xx*yy); c > best {
				best, bestLag = c, lag
			}
		}
		t.Logf("%s: %.3f s, correlation %.4f at a lag of %d samples", tc.file, p.Seconds(), best, bestLag)
		if best < 0.99 {
			t.Errorf("%s: correlation with the original %.4f", tc.file, best)
		}
	}
}

// wavImage builds a WAV file of frames×channels samples v(i) in the given
// format tag and bits, optionally as WAVE_FORMAT_EXTENSIBLE.
func wavImage(tag, bits, channels, rate int, extensible bool, samples []float64) []byte {
	var data bytes.Buffer
	for _, v := range samples {
		switch {
		case tag == wavePCM && bits == 8:
			data.WriteByte(byte(int(math.Round(v*128)) + 128))
		case tag == wavePCM && bits == 16:
			binary.Write(&data, binary.LittleEndian, int16(math.Round(v*(1<<15))))
		case tag == wavePCM && bits == 24:
			x := int32(math.Round(v * (1 << 23)))
			data.Write([]byte{byte(x), byte(x >> 8), byte(x >> 16)})
		case tag == wavePCM && bits == 32:
			binary.Write(&data, binary.LittleEndian, int32(math.Round(v*(1<<31))))
		case tag == waveFloat && bits == 32:
			binary.Write(&data, binary.LittleEndian, float32(v))
		case tag == waveFloat && bits == 64:
			binary.Write(&data, binary.LittleEndian, v)
		}
	}
	var fmtChunk bytes.Buffer
	align := channels * bits / 8
	hdrTag := tag
	if extensible {
		hdrTag = waveExtensible
	}
	binary.Write(&fmtChunk, binary.LittleEndian, []uint16{uint16(hdrTag), uint16(channels)})
	binary.Write(&fmtChunk, binary.LittleEndian, []uint32{uint32(rate), uint32(rate * align)})
	binary.Write(&fmtChunk, binary.LittleEndian, []uint16{uint16(align), uint16(bits)})
	if extensible {
		binary.Write(&fmtChunk, binary.LittleEndian, []uint16{22, uint16(bits)})
		binary.Write(&fmtChunk, binary.LittleEndian, uint32(0))
		binary.Write(&fmtChunk, binary.LittleEndian, uint16(tag))
		fmtChunk.Write([]byte{0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71})
	}
	var out bytes.Buffer
	out.WriteString("RIFF")
	binary.Write(&out, binary.LittleEndian, uint32(4+8+fmtChunk.Len()+8+data.Len()))
	out.WriteString("WAVEfmt ")
	binary.Write(&out, binary.LittleEndian, uint32(fmtChunk.Len()))
	out.Write(fmtChunk.Bytes())
	out.WriteString("data")
	binary.Write(&out, binary.LittleEndian, uint32(data.Len()))
	out.Write(data.Bytes())
	return out.Bytes()
}

// TestDecodeWAVFormats: every integer and float layout, plain and
// extensible, decodes to the values written (to the format's resolution).
func TestDecodeWAVFormats(t *testing.T) {
	vals := []float64{0, 0.5, -0.5, 0.25, -1, 0.99, 0.125, -0.125}
	for _, tc := range []struct {
		tag, bits int
		tol       float64
	}{
		{wavePCM, 8, 1.0 / 128}, {wavePCM, 16, 1.0 / (1 << 15)}, {wavePCM, 24, 1.0 / (1 << 23)},
		{wavePCM, 32, 1e-7}, {waveFloat, 32, 0}, {waveFloat, 64, 0},
	} {
		for _, ext := range []bool{false, true} {
			p, _, err := Decode(wavImage(tc.tag, tc.bits, 2, 22050, ext, vals), 60)
			if err != nil {
				t.Fatalf("tag %d, %d bits, extensible %v: %v", tc.tag, tc.bits, ext, err)
			}
			if p.Channels != 2 || p.Rate != 22050 || p.Frames() != 4 {
				t.Fatalf("tag %d, %d bits: %d channels %d Hz %d frames", tc.tag, tc.bits, p.Channels, p.Rate, p.Frames())
			}
			for i, v := range vals {
				if d := math.Abs(float64(p.Samples[i]) - v); d > tc.tol+1e-7 && !(tc.bits == 8 && v == 0.99) {
					t.Errorf("tag %d, %d bits: sample %d is %g, want %g", tc.tag, tc.bits, i, p.Samples[i], v)
				}
			}
			if m := p.Mono(); len(m) != 4 || math.Abs(float64(m[0])-0.25) > tc.tol+1e-7 {
				t.Errorf("tag %d, %d bits: mono %v", tc.tag, tc.bits, m)
			}
		}
	}
}

// TestDecodeRefuses: each malformed or unsupported file gets an error
// naming the problem.
func TestDecodeRefuses(t *testing.T) {
	good := wavImage(wavePCM, 16, 1, 44100, false, make([]float64, 100))
	bad12 := wavImage(wavePCM, 16, 1, 44100, false, make([]float64, 100))
	binary.LittleEndian.PutUint16(bad12[34:], 12) // 12 bits
	nan := wavImage(waveFloat, 32, 1, 44100, false, []float64{0, math.NaN()})
	noFmt := append([]byte("RIFF\x04\x00\x00\x00WAVE"), []byte("data\x00\x00\x00\x00")...)
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "empty"},
		{"text", []byte("hello, world"), "not a WAV, FLAC, MP3 or Ogg Opus"},
		{"vorbis", readTestdata(t, "ref.ogg"), "Ogg Vorbis is not supported"},
		{"riff avi", []byte("RIFF\x00\x00\x00\x00AVI LIST"), "not WAVE"},
		{"12-bit", bad12, "12 bits per sample is not supported"},
		{"nan", nan, "sample 1 is not finite"},
		{"no fmt", noFmt, "missing fmt or data chunk"},
		{"truncated flac", readTestdata(t, "ref.flac")[:20001], "FLAC"},
		{"truncated opus", readTestdata(t, "ref.opus")[:60], "Ogg Opus"},
		{"too long", good, "too long"},
	} {
		max := 60.0
		if tc.name == "too long" {
			max = 0.001
		}
		_, _, err := Decode(tc.b, max)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if tc.name == "too long" && !errors.Is(err, ErrTooLong) {
			t.Errorf("too long: %v is not ErrTooLong", err)
		}
	}
	for _, file := range []string{"ref.flac", "ref.mp3", "ref.opus"} {
		if _, _, err := Decode(readTestdata(t, file), 0.02); !errors.Is(err, ErrTooLong) {
			t.Errorf("%s past 0.02 s: %v", file, err)
		}
	}
}

// FuzzDecodeWAV: no input panics the WAV parser or the sniffer; what
// decodes has a sane shape.
func FuzzDecodeWAV(f *testing.F) {
	f.Add(wavImage(wavePCM, 24, 2, 48000, true, []float64{0.1, -0.2, 0.3, 0.4}))
	f.Add(wavImage(waveFloat, 64, 1, 8000, false, []float64{0.1, -0.2}))
	f.Add(wavImage(wavePCM, 8, 1, 8000, false, []float64{0.1, -0.2}))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzCheck(t, b)
	})
}

// FuzzDecode runs every decoder (the libraries' too) on mutations of the
// compressed testdata.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"ref.flac", "ref.mp3", "ref.opus"} {
		b := readTestdata(f, name)
		f.Add(b[:min(len(b), 4096)])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzCheck(t, b)
	})
}

// fuzzCheck: a file that decodes gives a sane shape within the limit, only
// finite samples, and, where its samples are integers (FLAC, integer-PCM
// WAV), none beyond ±1.
func fuzzCheck(t *testing.T, b []byte) {
	p, f, err := Decode(b, 5)
	if err != nil {
		return
	}
	// The budget: the declaration within the limits, at most 5 s decoded
	// and no more memory held than those 5 s.
	if p.Channels < 1 || p.Channels > MaxChannels || p.Rate < 1 || p.Rate > MaxRate ||
		len(p.Samples)%p.Channels != 0 || p.Frames() > 5*p.Rate+1 || cap(p.Samples) > (5*p.Rate+1)*p.Channels {
		t.Fatalf("%d channels, %d Hz, %d samples (capacity %d)", p.Channels, p.Rate, len(p.Samples), cap(p.Samples))
	}
	integer := f == FLAC || f == WAV && !wavDeclaresFloat(b)
	for i, v := range p.Samples {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("%s: sample %d is %v", f, i, v)
		}
		if integer && math.Abs(float64(v)) > 1 {
			t.Fatalf("%s of integer samples: sample %d is %v, beyond ±1", f, i, v)
		}
	}
}

// wavDeclaresFloat reports whether the RIFF image's last fmt chunk (the one
// a reader that walks the chunks keeps) says IEEE float, directly or as the
// extensible sub-format; written apart from decodeWAV, as the test's own
// reading of the header.
func wavDeclaresFloat(b []byte) bool {
	float := false
	for off := 12; off+8 <= len(b); {
		size := int(min(uint64(binary.LittleEndian.Uint32(b[off+4:])), uint64(len(b)-off-8)))
		if string(b[off:off+4]) == "fmt " && size >= 16 {
			tag := binary.LittleEndian.Uint16(b[off+8:])
			if tag == waveExtensible && size >= 26 {
				tag = binary.LittleEndian.Uint16(b[off+8+24:])
			}
			float = tag == waveFloat
		}
		off += 8 + size + size&1
	}
	return float
}
