package encode

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"proscenium/engine/audio/resample"
)

// speechLike is a test signal with speech's shape: a 140 Hz voice with
// harmonics under a syllable-rate envelope, silences between.
func speechLike(rate, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		t := float64(i) / float64(rate)
		env := math.Max(0, math.Sin(2*math.Pi*3*t)) // ~6 syllables a second
		var v float64
		for h := 1; h <= 12; h++ {
			v += math.Sin(2*math.Pi*140*float64(h)*t+float64(h)) / float64(h)
		}
		out[i] = float32(0.3 * env * v)
	}
	return out
}

// decode runs ffmpeg (a decoder independent of the encoders under test) and
// returns the samples and the rate it reports.
func decode(t *testing.T, data []byte) ([]float32, int) {
	return decodeAs(t, data, nil)
}

// decodeAs decodes with ffmpeg input options (raw PCM needs its format).
func decodeAs(t *testing.T, data []byte, inOpts []string) ([]float32, int) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ffmpeg is missing (make deps installs it)")
		}
		t.Skip("ffmpeg is missing (make deps installs it)")
	}
	// A file, not a pipe: ffmpeg trims mp3's end padding only when it can seek.
	path := filepath.Join(t.TempDir(), "take")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	probe := exec.Command("ffprobe", append(append([]string{"-v", "error"}, inOpts...),
		"-show_entries", "stream=sample_rate,channels", "-of", "csv=p=0", path)...)
	info, err := probe.Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	fields := strings.Split(strings.TrimSpace(string(info)), ",")
	rate, _ := strconv.Atoi(fields[0])
	if len(fields) != 2 || fields[1] != "1" {
		t.Fatalf("ffprobe: %q, want one channel", info)
	}
	cmd := exec.Command("ffmpeg", append(append([]string{"-v", "error"}, inOpts...), "-i", path, "-f", "f32le", "-")...)
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("ffmpeg: %v", err)
	}
	pcm := make([]float32, len(raw)/4)
	for i := range pcm {
		pcm[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return pcm, rate
}

// snr is the signal-to-error ratio in dB of got against want over want's
// length, got shifted left by lag samples.
func snr(want, got []float32, lag int) float64 {
	var s, e float64
	for i, w := range want {
		var g float64
		if j := i + lag; j >= 0 && j < len(got) {
			g = float64(got[j])
		}
		s += float64(w) * float64(w)
		e += (float64(w) - g) * (float64(w) - g)
	}
	return 10 * math.Log10(s/e)
}

// bestLag is the shift of got in [0, maxLag] that best matches want.
func bestLag(want, got []float32, maxLag int) (int, float64) {
	best, at := math.Inf(-1), 0
	for lag := 0; lag <= maxLag; lag++ {
		if s := snr(want, got, lag); s > best {
			best, at = s, lag
		}
	}
	return at, best
}

func resampled(t *testing.T, in []float32, from, to int) []float32 {
	t.Helper()
	r, err := resample.New(from, to)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := r.Process(in)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]float32(nil), a...)
	b, err := r.Flush()
	if err != nil {
		t.Fatal(err)
	}
	return append(out, b...)
}

// Each format decodes back (by ffmpeg) to the input within the codec's
// expected error, at the right rate and length. Lossless formats must match
// the PCM16 rounding (≥ 80 dB); the perceptual codecs must keep the waveform
// (≥ 15–20 dB SNR on this harmonic signal: a wrong rate, offset or sign gives
// ≤ 0 dB). mp3 (with its Info tag) and Opus (pre-skip, granule) decode to
// exactly the samples put in; ADTS AAC cannot say its priming, so it
// decodes late by the encoder's delay and padded to whole frames.
func TestRoundTrip(t *testing.T) {
	for _, rate := range []int{44100, 24000, 16000} {
		in := speechLike(rate, rate*3/2+123) // 1.5 s and a partial block
		for _, tc := range []struct {
			f       Format
			minSNR  float64
			maxLag  int // the decoder's output may start this late
			slack   int // and hold this many more samples at the end
			decRate int // the decoder's rate (0: the input's)
		}{
			{f: WAV, minSNR: 80},
			{f: FLAC, minSNR: 80},
			{f: MP3, minSNR: 20},
			{f: Opus, minSNR: 15, decRate: 48000}, // 64 kbit/s; ~20 dB at 16 kHz
			{f: AAC, minSNR: 20, maxLag: 2048, slack: 1024},
		} {
			t.Run(fmt.Sprintf("%s/%d", tc.f, rate), func(t *testing.T) {
				data, err := Encode(tc.f, rate, in)
				if err != nil {
					t.Fatal(err)
				}
				got, gotRate := decode(t, data)
				want, wantRate := in, rate
				if tc.decRate != 0 {
					want, wantRate = resampled(t, in, rate, tc.decRate), tc.decRate
				}
				if gotRate != wantRate {
					t.Fatalf("rate %d, want %d", gotRate, wantRate)
				}
				lag, s := bestLag(want, got, tc.maxLag)
				if len(got) < len(want)+lag || len(got) > len(want)+lag+tc.slack {
					t.Fatalf("%d samples, want %d (+%d lag, ≤ %d more)", len(got), len(want), lag, tc.slack)
				}
				if s < tc.minSNR {
					t.Fatalf("SNR %.1f dB at lag %d, want ≥ %.0f", s, lag, tc.minSNR)
				}
				t.Logf("%d bytes, lag %d, SNR %.1f dB", len(data), lag, s)
			})
		}
	}
}

// onlyWriter hides Buffer's Seek: what a streamed reply's writer is.
type onlyWriter struct{ b *Buffer }

func (w onlyWriter) Write(p []byte) (int, error) { return w.b.Write(p) }

// Streamed in uneven chunks to a writer that cannot seek, every format
// still decodes to the whole take (headers with unknown lengths; mp3
// without its Info tag decodes with LAME's delay), and the encoders write
// as they go rather than all at Close.
func TestStreamed(t *testing.T) {
	const rate = 24000
	in := speechLike(rate, rate*2)
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			var b Buffer
			e, err := New(onlyWriter{&b}, f, rate)
			if err != nil {
				t.Fatal(err)
			}
			half := 0
			for i, step := 0, 100; i < len(in); i, step = i+step, step+300 {
				if err := e.Write(in[i:min(len(in), i+step)]); err != nil {
					t.Fatal(err)
				}
				if half == 0 && i >= len(in)/2 {
					half = len(b.Bytes())
				}
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if half < len(b.Bytes())/4 {
				t.Errorf("%d of %d bytes written by mid-take", half, len(b.Bytes()))
			}
			var opts []string
			if f == PCM {
				opts = []string{"-f", "s16le", "-ar", fmt.Sprint(rate), "-ac", "1"}
			}
			got, gotRate := decodeAs(t, b.Bytes(), opts)
			want := in
			if f == Opus {
				want = resampled(t, in, rate, 48000)
			} else if gotRate != rate {
				t.Fatalf("rate %d", gotRate)
			}
			lag, s := bestLag(want, got, 2048+1105)
			if s < 15 || len(got) < len(want)+lag || len(got) > len(want)+lag+2048 {
				t.Fatalf("%d samples for %d, lag %d, SNR %.1f dB", len(got), len(want), lag, s)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	for _, f := range Formats() {
		if _, err := New(&Buffer{}, f, 11025); err == nil {
			t.Errorf("%s: 11025 Hz accepted", f)
		}
		e, err := New(&Buffer{}, f, 44100)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Write([]float32{0, float32(math.NaN())}); err == nil {
			t.Errorf("%s: NaN accepted", f)
		}
		e.Close()
	}
	for _, f := range Formats() { // an empty take is a valid, empty file
		data, err := Encode(f, 24000, nil)
		if err != nil {
			t.Errorf("%s: empty take: %v", f, err)
		}
		if f != PCM && len(data) == 0 {
			t.Errorf("%s: empty take gave no bytes", f)
		}
	}
	if _, err := New(&Buffer{}, Format("ogg"), 44100); err == nil {
		t.Error("format ogg accepted")
	}
}
