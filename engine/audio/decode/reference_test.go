package decode

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// correlation is the best normalised correlation of got against want over
// lags 0..maxLag of got, on want's samples [from, to).
func correlation(want, got []float32, from, to, maxLag int) (float64, int) {
	best, bestLag := -1.0, 0
	for lag := 0; lag <= maxLag; lag++ {
		var xy, xx, yy float64
		for i := from; i < to && i+lag < len(got); i++ {
			x, y := float64(want[i]), float64(got[i+lag])
			xy, xx, yy = xy+x*y, xx+x*x, yy+y*y
		}
		if c := xy / math.Sqrt(xx*yy); c > best {
			best, bestLag = c, lag
		}
	}
	return best, bestLag
}

// TestReadReference: each format of the same recording becomes 44.1 kHz
// mono audio of that recording; WAV and FLAC identically.
func TestReadReference(t *testing.T) {
	wav, err := ReadReference(readTestdata(t, "ref.wav"))
	if err != nil {
		t.Fatal(err)
	}
	if len(wav.Samples) != 110250 || wav.SourceRate != 44100 || wav.Format != WAV {
		t.Fatalf("wav: %d samples from %d Hz %s", len(wav.Samples), wav.SourceRate, wav.Format)
	}
	fl, err := ReadReference(readTestdata(t, "ref.flac"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range wav.Samples {
		if fl.Samples[i] != wav.Samples[i] {
			t.Fatalf("flac sample %d differs from the wav", i)
		}
	}
	// A 48 kHz stereo float WAV of the same signal in both channels.
	src, _, err := Decode(readTestdata(t, "ref.wav"), 60)
	if err != nil {
		t.Fatal(err)
	}
	r48, err := ReadReference(wavImage(waveFloat, 32, 2, 48000, false, upsample48k(src.Samples)))
	if err != nil {
		t.Fatal(err)
	}
	if r48.SourceRate != 48000 || r48.SourceChannels != 2 || math.Abs(float64(len(r48.Samples)-110250)) > 2 {
		t.Errorf("48 kHz stereo: %d samples from %d Hz, %d channels", len(r48.Samples), r48.SourceRate, r48.SourceChannels)
	}
	for _, tc := range []struct {
		name string
		ref  *Reference
		min  float64
	}{{"48 kHz stereo wav", r48, 0.999}, {"mp3", read(t, "ref.mp3"), 0.99}, {"opus", read(t, "ref.opus"), 0.98}} {
		c, lag := correlation(wav.Samples, tc.ref.Samples, 5000, 100000, 200)
		t.Logf("%s: %.3f s, correlation %.4f at lag %d", tc.name, tc.ref.Seconds(), c, lag)
		if c < tc.min || tc.ref.Seconds() < 2.49 || tc.ref.Seconds() > 2.6 {
			t.Errorf("%s: %.3f s, correlation %.4f with the original", tc.name, tc.ref.Seconds(), c)
		}
	}
}

func read(t *testing.T, name string) *Reference {
	t.Helper()
	r, err := ReadReference(readTestdata(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// upsample48k resamples 44.1 kHz mono to 48 kHz stereo by linear
// interpolation (a test signal of low harmonics, where that is accurate),
// both channels the signal.
func upsample48k(x []float32) []float64 {
	n := len(x) * 48000 / 44100
	out := make([]float64, 0, 2*n)
	for i := 0; i < n; i++ {
		p := float64(i) * 44100 / 48000
		j := int(p)
		fr := p - float64(j)
		v := float64(x[j])
		if j+1 < len(x) {
			v = v*(1-fr) + float64(x[j+1])*fr
		}
		out = append(out, v, v)
	}
	return out
}

// TestReadReferenceRefuses: unreadable, too short, too long and silent
// references are errors naming the problem.
func TestReadReferenceRefuses(t *testing.T) {
	tone := func(seconds float64, rate int, amp float64) []float64 {
		v := make([]float64, int(seconds*float64(rate)))
		for i := range v {
			v[i] = amp * math.Sin(float64(i)*0.3)
		}
		return v
	}
	for _, tc := range []struct {
		name string
		b    []byte
		is   error
		want string
	}{
		{"text", []byte("not audio"), nil, "cannot read the reference: not a WAV"},
		{"short", wavImage(wavePCM, 16, 1, 16000, false, tone(1.5, 16000, 0.5)), ErrTooShort, "1.50 s, at least 2 s"},
		{"long", wavImage(wavePCM, 8, 1, 8000, false, tone(31.5, 8000, 0.5)), ErrTooLong, "longer than 30 s"},
		{"long by a little", wavImage(wavePCM, 8, 1, 8000, false, tone(30.5, 8000, 0.5)), ErrTooLong, "30.5 s"},
		{"silent", wavImage(wavePCM, 16, 1, 16000, false, tone(3, 16000, 0)), ErrSilent, "-Inf dBFS"},
		{"near silent", wavImage(waveFloat, 32, 1, 16000, false, tone(3, 16000, 1e-4)), ErrSilent, "-80 dBFS"},
	} {
		_, err := ReadReference(tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if r, err := ReadReference(wavImage(wavePCM, 16, 1, 16000, false, tone(2.0, 16000, 0.5))); err != nil || len(r.Samples) != 88200 {
		t.Errorf("exactly 2 s at 16 kHz: %v", err)
	}
}
