package loudness

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// The 48 kHz coefficients printed in ITU-R BS.1770-4 (tables 1 and 2).
func TestKWeightingMatchesTheStandardAt48k(t *testing.T) {
	k := kWeighting(48000)
	want := [2]biquad{
		{b0: 1.53512485958697, b1: -2.69169618940638, b2: 1.19839281085285, a1: -1.69065929318241, a2: 0.73248077421585},
		{b0: 1, b1: -2, b2: 1, a1: -1.99004745483398, a2: 0.99007225036621},
	}
	for i := range k {
		got, w := k[i], want[i]
		for j, pair := range [][2]float64{{got.b0, w.b0}, {got.b1, w.b1}, {got.b2, w.b2}, {got.a1, w.a1}, {got.a2, w.a2}} {
			if math.Abs(pair[0]-pair[1]) > 1e-9 {
				t.Errorf("stage %d coefficient %d: %.14f, the standard says %.14f", i+1, j, pair[0], pair[1])
			}
		}
	}
}

// sine appends seconds of a 997 Hz sine whose peak is dBFS.
func sine(dst []float32, rate int, dBFS, seconds float64) []float32 {
	a := math.Pow(10, dBFS/20)
	start := len(dst)
	n := int(math.Round(seconds * float64(rate)))
	for i := range n {
		dst = append(dst, float32(a*math.Sin(2*math.Pi*997*float64(start+i)/float64(rate))))
	}
	return dst
}

// stereo measures the same signal in left and right, as EBU Tech 3341's
// test signals are.
func stereo(t *testing.T, pcm []float32, rate int) float64 {
	t.Helper()
	l, err := IntegratedChannels([][]float32{pcm, pcm}, rate)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// EBU Tech 3341 (2016), table 1, cases 1-5: the expected integrated
// loudness is -23.0 (case 2: -33.0) LUFS ± 0.1 LU.
func TestTech3341Gating(t *testing.T) {
	const rate = 48000
	type part struct{ dBFS, seconds float64 }
	cases := []struct {
		name  string
		parts []part
		want  float64
	}{
		{"case 1: -23 dBFS", []part{{-23, 20}}, -23},
		{"case 2: -33 dBFS", []part{{-33, 20}}, -33},
		{"case 3: relative gate", []part{{-36, 10}, {-23, 60}, {-36, 10}}, -23},
		{"case 4: both gates", []part{{-72, 10}, {-36, 10}, {-23, 60}, {-36, 10}, {-72, 10}}, -23},
		{"case 5: -26/-20/-26", []part{{-26, 20}, {-20, 20.1}, {-26, 20}}, -23},
	}
	for _, c := range cases {
		var pcm []float32
		for _, p := range c.parts {
			pcm = sine(pcm, rate, p.dBFS, p.seconds)
		}
		if got := stereo(t, pcm, rate); math.Abs(got-c.want) > 0.1 {
			t.Errorf("%s: %.3f LUFS, want %.1f ± 0.1", c.name, got, c.want)
		}
	}
}

// One channel of a 997 Hz sine reads its RMS level (3.01 dB under its
// peak) at any rate: the K-weighting's gain there is what the -0.691
// offset takes back.
func TestMonoSineReadsItsRMSAtEveryRate(t *testing.T) {
	for _, rate := range []int{22050, 44100, 48000, 96000} {
		pcm := sine(nil, rate, -20, 5)
		got, err := Integrated(pcm, rate)
		if err != nil {
			t.Fatal(err)
		}
		if want := -20 - 10*math.Log10(2); math.Abs(got-want) > 0.05 {
			t.Errorf("%d Hz: %.3f LUFS, want %.3f", rate, got, want)
		}
	}
}

func TestSilenceShortAndBadInput(t *testing.T) {
	if l, err := Integrated(make([]float32, 48000), 48000); err != nil || !math.IsInf(l, -1) {
		t.Errorf("silence: %v, %v; want -Inf", l, err)
	}
	if _, err := Integrated(make([]float32, 19000), 48000); !errors.Is(err, ErrTooShort) {
		t.Errorf("0.39 s: %v, want ErrTooShort", err)
	}
	bad := sine(nil, 48000, -20, 1)
	bad[30000] = float32(math.NaN())
	if _, err := Integrated(bad, 48000); err == nil {
		t.Error("a NaN sample was measured")
	}
	if _, err := Integrated(bad, 1000); err == nil {
		t.Error("1000 Hz was measured")
	}
	if _, err := IntegratedChannels([][]float32{bad, bad[:10]}, 48000); err == nil {
		t.Error("channels of different lengths were measured")
	}
}

// A sine at a quarter of the rate, sampled 45° off its crests: every sample
// is 3.01 dB under the true peak, which the oversampled meter finds. (It
// fades in and out over 1000 samples: a sine that starts at full level
// overshoots in any band-limited interpolation.)
func TestTruePeakBetweenSamples(t *testing.T) {
	for _, rate := range []int{44100, 48000} {
		const a = 0.5
		pcm := make([]float32, rate)
		for i := range pcm {
			fade := min(1, float64(i)/1000, float64(len(pcm)-1-i)/1000)
			pcm[i] = float32(a * fade * math.Sin(math.Pi/2*float64(i)+math.Pi/4))
		}
		sample := 20 * math.Log10(a*math.Sqrt2/2)
		got, want := TruePeak(pcm, rate), 20*math.Log10(a)
		if math.Abs(got-want) > 0.1 {
			t.Errorf("%d Hz: true peak %.3f dBTP, want %.3f (sample peak %.3f)", rate, got, want, sample)
		}
	}
	if p := TruePeak(make([]float32, 100), 48000); !math.IsInf(p, -1) {
		t.Errorf("silence: true peak %v", p)
	}
}

func TestPlanGain(t *testing.T) {
	const rate = 44100
	pcm := sine(nil, rate, -30, 3)
	p, err := PlanGain(pcm, rate, -16, -1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Limited || math.Abs(p.Result+16) > 1e-9 {
		t.Fatalf("plan %+v", p)
	}
	Apply(pcm, p.GainDB)
	if got, _ := Integrated(pcm, rate); math.Abs(got+16) > 0.01 {
		t.Errorf("after the gain: %.3f LUFS, want -16", got)
	}
	// A sine's true peak sits 3 dB over its loudness: at -5 LUFS it would
	// pass -3 dBTP, so the gain stops at that ceiling.
	p, err = PlanGain(pcm, rate, -5, -3)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Limited || math.Abs(p.ResultTP+3) > 1e-9 || p.Result > -5.5 {
		t.Errorf("limited plan %+v", p)
	}
	for _, target := range []float64{-41, 0, math.NaN()} {
		if _, err := PlanGain(pcm, rate, target, -1); err == nil {
			t.Errorf("target %v accepted", target)
		}
	}
	if _, err := PlanGain(make([]float32, rate), rate, -16, -1); !errors.Is(err, ErrSilent) {
		t.Errorf("silence: %v", err)
	}
}

// TestTruePeakInParts: measured in parts on several cores, a long signal's
// true peak is the one measured in one pass, wherever the peak lies (at a
// part's edge too).
func TestTruePeakInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	r := rand.New(rand.NewPCG(7, 7))
	pcm := make([]float32, 5*minPartSamples+123)
	for i := range pcm {
		pcm[i] = float32(r.NormFloat64() * 0.05)
	}
	parts := min(runtime.GOMAXPROCS(0), len(pcm)/minPartSamples)
	for _, at := range []int{1, len(pcm) / parts, len(pcm)/parts + 1, 3 * len(pcm) / 4, len(pcm) - 1} {
		q := append([]float32(nil), pcm...)
		q[at-1], q[at] = 0.9, 0.9 // their peak lies between them, over 0.9
		one := 20 * math.Log10(truePeakOf(q, polyphase(4), 0, len(q)))
		if got := TruePeak(q, 44100); got != one || got <= 20*math.Log10(0.9) {
			t.Errorf("peak at sample %d: %v dBTP in %d parts, %v in one", at, got, parts, one)
		}
	}
}
