package pcm

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/engine/internal/testutil"
)

func TestToPCM16(t *testing.T) {
	for _, tc := range []struct {
		x    float32
		want int16
	}{
		{0, 0},
		{1, 32767},
		{-1, -32767},
		{2, 32767},   // clipped
		{-3, -32767}, // clipped
		{0.5, 16384}, // 16383.5 → ties to even
		{-0.5, -16384},
		{0.25, 8192}, // 8191.75
		{float32(math.Inf(1)), 32767},
	} {
		if got := ToPCM16(tc.x); got != tc.want {
			t.Errorf("ToPCM16(%v) = %d, want %d", tc.x, got, tc.want)
		}
	}
	// The only float32 x whose product x·32767 is exactly k + 0.5 in
	// [0, 20000) is 0.5 (k = 16383): checked here, and the tie goes to even.
	if x := float32(0.5); float64(x)*32767 != 16383.5 || ToPCM16(x) != 16384 || ToPCM16(-x) != -16384 {
		t.Error("tie 16383.5 does not round to even")
	}
}

func TestWAVHeaderLayout(t *testing.T) {
	// A hand-assembled 44-byte PCM16 header for 3 samples at 44.1 kHz.
	want := []byte("RIFF")
	want = binary.LittleEndian.AppendUint32(want, 36+6)
	want = append(want, "WAVEfmt "...)
	want = binary.LittleEndian.AppendUint32(want, 16)
	want = binary.LittleEndian.AppendUint16(want, 1)     // PCM
	want = binary.LittleEndian.AppendUint16(want, 1)     // mono
	want = binary.LittleEndian.AppendUint32(want, 44100) // rate
	want = binary.LittleEndian.AppendUint32(want, 88200) // byte rate
	want = binary.LittleEndian.AppendUint16(want, 2)     // block align
	want = binary.LittleEndian.AppendUint16(want, 16)    // bits
	want = append(want, "data"...)
	want = binary.LittleEndian.AppendUint32(want, 6)
	want = append(want, 0xff, 0x7f, 0x01, 0x80, 0x00, 0x00) // 32767, -32767, 0
	got, err := EncodeWAV([]float32{1.5, -1, 0}, SampleRate, PCM16)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("PCM16 WAV\n got %x\nwant %x", got, want)
	}

	f, err := EncodeWAV([]float32{0.25, -2}, SampleRate, Float32)
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 58+8 || string(f[38:42]) != "fact" || string(f[50:54]) != "data" {
		t.Fatalf("float WAV layout: %d bytes, %q %q", len(f), f[38:42], f[50:54])
	}
	if tag := binary.LittleEndian.Uint16(f[20:]); tag != 3 {
		t.Errorf("float WAV format tag %d, want 3 (WAVE_FORMAT_IEEE_FLOAT)", tag)
	}
	if v := math.Float32frombits(binary.LittleEndian.Uint32(f[62:])); v != -2 {
		t.Errorf("float sample %v, want -2 (float is not clipped)", v)
	}
}

func TestWAVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	samples := make([]float32, 1001)
	for i := range samples {
		samples[i] = float32(math.Sin(float64(i)*0.05)) * 1.2 // some clip
	}
	for _, f := range []Format{PCM16, Float32} {
		p := filepath.Join(dir, f.String()+".wav")
		if err := WriteWAV(p, samples, SampleRate, f); err != nil {
			t.Fatal(err)
		}
		w, err := ReadWAVFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if w.Rate != SampleRate || w.Channels != 1 || w.Format != f || len(w.Samples) != len(samples) {
			t.Fatalf("%v: read back %d Hz %d ch %v %d samples", f, w.Rate, w.Channels, w.Format, len(w.Samples))
		}
		for i, x := range samples {
			want := x
			if f == PCM16 {
				want = float32(ToPCM16(x)) / 32767
			}
			if w.Samples[i] != want {
				t.Fatalf("%v sample %d: %v, want %v", f, i, w.Samples[i], want)
			}
		}
		raw := filepath.Join(dir, f.String()+".raw")
		if err := WriteRaw(raw, samples, f); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(raw)
		if !bytes.Equal(b, w.Raw) {
			t.Errorf("%v: raw file differs from the WAV data chunk", f)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("%d files in the directory, want 4 (no temporaries left)", len(entries))
	}
}

func TestWriteRefusesNonFinite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.wav")
	err := WriteWAV(p, []float32{0, float32(math.NaN())}, SampleRate, PCM16)
	if err == nil || !strings.Contains(err.Error(), "sample 1") {
		t.Fatalf("error %v, want one naming sample 1", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d entries behind", len(entries))
	}
}

// TestWriteReadOnlyDirectory writes into a directory without write
// permission. Root ignores permissions, so as root the test re-runs itself as
// user nobody.
func TestWriteReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		testutil.RunAsNobody(t, "TestWriteReadOnlyDirectory")
		return
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	p := filepath.Join(dir, "take.wav")
	err := WriteWAV(p, []float32{0.1, 0.2}, SampleRate, Float32)
	if err == nil || !strings.Contains(err.Error(), "take.wav") || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("error %v, want a permission error naming take.wav", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d entries behind", len(entries))
	}
	if err := WriteRaw(filepath.Join(dir, "take.raw"), []float32{0.1}, PCM16); err == nil {
		t.Error("raw write into a read-only directory succeeded")
	}
}

// A failure after the temporary file is written (the target is a non-empty
// directory, so the rename fails) removes the temporary file; runs as root too.
func TestWriteFailedRenameLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "take.wav")
	if err := os.MkdirAll(filepath.Join(target, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteWAV(target, []float32{0.1}, SampleRate, PCM16)
	if err == nil || !strings.Contains(err.Error(), "take.wav") {
		t.Fatalf("error %v, want one naming take.wav", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the directory, want only the target", len(entries))
	}
}

func TestAtomicReplaceKeepsOldOnError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.wav")
	if err := WriteWAV(p, []float32{0.5}, SampleRate, PCM16); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(p)
	if err := WriteWAV(p, []float32{float32(math.Inf(-1))}, SampleRate, PCM16); err == nil {
		t.Fatal("infinite sample written")
	}
	if now, _ := os.ReadFile(p); !bytes.Equal(now, old) {
		t.Error("failed write changed the existing file")
	}
}

func TestParseWAVRejects(t *testing.T) {
	good, _ := EncodeWAV([]float32{0.1, 0.2}, SampleRate, PCM16)
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for _, tc := range []struct {
		name, want string
		b          []byte
	}{
		{"not riff", "RIFF/WAVE", []byte("RIFX0000WAVE")},
		{"riff size", "RIFF size", mut(func(b []byte) []byte { return b[:len(b)-2] })},
		{"chunk past end", "runs past", mut(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[40:], 100); return b })},
		{"8-bit", "not supported", mut(func(b []byte) []byte { binary.LittleEndian.PutUint16(b[34:], 8); return b })},
		{"block align", "inconsistent", mut(func(b []byte) []byte { binary.LittleEndian.PutUint16(b[32:], 4); return b })},
	} {
		if _, err := ParseWAV(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := ParseFormat("mp3"); err == nil {
		t.Error("ParseFormat(mp3) accepted")
	}
}

// FuzzParseWAV: a file that parses re-encodes, in its own format and
// rate, to the same data bytes (PCM16's −32768, which the writer never
// makes, comes back as −32767), and parses again to the same samples; a
// float file with a non-finite sample is refused by the writer.
func FuzzParseWAV(f *testing.F) {
	for _, fm := range []Format{PCM16, Float32} {
		b, _ := EncodeWAV([]float32{0.5, -0.25, 1}, SampleRate, fm)
		f.Add(b)
	}
	// −32768 and two channels (block align 4, byte rate 4·rate).
	stereo, _ := EncodeWAV([]float32{0, 0.5, -0.5, 1}, 22050, PCM16)
	binary.LittleEndian.PutUint16(stereo[22:], 2)
	binary.LittleEndian.PutUint32(stereo[28:], 4*22050)
	binary.LittleEndian.PutUint16(stereo[32:], 4)
	binary.LittleEndian.PutUint16(stereo[len(stereo)-2:], 0x8000)
	if w, err := ParseWAV(stereo); err != nil || w.Channels != 2 || w.Samples[3] >= -1 {
		f.Fatalf("the stereo seed: %v", err)
	}
	f.Add(stereo)
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ParseWAV(b)
		if err != nil {
			return
		}
		enc, err := EncodeWAV(w.Samples, w.Rate, w.Format)
		if w.Format == Float32 && checkFinite(w.Samples) != nil {
			if err == nil {
				t.Fatal("a non-finite sample was written")
			}
			return
		}
		if err != nil {
			t.Fatalf("%v: %v", w.Format, err)
		}
		back, err := ParseWAV(enc)
		if err != nil {
			t.Fatalf("%v: the written file does not parse: %v", w.Format, err)
		}
		want := w.Raw
		if w.Format == PCM16 {
			want = bytes.Clone(w.Raw)
			for i := 0; i < len(want); i += 2 {
				if binary.LittleEndian.Uint16(want[i:]) == 0x8000 {
					binary.LittleEndian.PutUint16(want[i:], 0x8001)
				}
			}
		}
		if back.Format != w.Format || back.Rate != w.Rate || !bytes.Equal(back.Raw, want) {
			t.Fatalf("%v round trip: %v at %d Hz, data equal %v", w.Format, back.Format, back.Rate, bytes.Equal(back.Raw, want))
		}
		for i, v := range back.Samples {
			if math.Float32bits(v) != math.Float32bits(w.Samples[i]) && !(w.Format == PCM16 && w.Samples[i] < -1) {
				t.Fatalf("%v round trip: sample %d is %v, was %v", w.Format, i, v, w.Samples[i])
			}
		}
	})
}
