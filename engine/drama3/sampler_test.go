package drama3

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"proscenium/engine/sampling"
)

// logs returns float32 natural logarithms of xs: softmax of them at
// temperature 1 is xs / Σxs.
func logs(xs ...float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(math.Log(x))
	}
	return out
}

func TestSampleWithHandComputedDistributions(t *testing.T) {
	// p = [0.1, 0.2, 0.3, 0.4]: sorted order 3, 2, 1, 0 with running mass
	// 0.4, 0.7, 0.9, 1.0.
	p1234 := logs(1, 2, 3, 4)
	ties := []float32{1, 1, 1, 1} // 0.25 each, order 0, 1, 2, 3
	cases := []struct {
		name     string
		logits   []float32
		settings sampling.Settings
		u        float64
		want     int
	}{
		{"full u=0", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0, 3},
		{"full u=.39", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0.39, 3},
		{"full u=.41", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0.41, 2},
		{"full u=.69", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0.69, 2},
		{"full u=.71", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0.71, 1},
		{"full u=.89", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0.89, 1},
		{"full u=.91", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0.91, 0},
		{"full u→1", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0.9999999, 0},
		// top-p 0.65 keeps {3, 2} (mass .7): renormalised .4/.7 = .5714, .3/.7.
		{"top-p .65 u=.57", p1234, sampling.Settings{Temperature: 1, TopP: 0.65, TopK: 0}, 0.57, 3},
		{"top-p .65 u=.58", p1234, sampling.Settings{Temperature: 1, TopP: 0.65, TopK: 0}, 0.58, 2},
		{"top-p .65 u=.99", p1234, sampling.Settings{Temperature: 1, TopP: 0.65, TopK: 0}, 0.99, 2},
		// top-p 0.35 keeps {3} alone.
		{"top-p .35", p1234, sampling.Settings{Temperature: 1, TopP: 0.35, TopK: 0}, 0.99, 3},
		// top-p .95 keeps all four (.9 < .95), top-k 2 then keeps {3, 2}.
		{"top-p .95 top-k 2 u=.58", p1234, sampling.Settings{Temperature: 1, TopP: 0.95, TopK: 2}, 0.58, 2},
		{"top-p .95 top-k 2 u=.56", p1234, sampling.Settings{Temperature: 1, TopP: 0.95, TopK: 2}, 0.56, 3},
		// top-k 3: {3, 2, 1}, mass .9: cut points .4/.9 = .444, .7/.9 = .778.
		{"top-k 3 u=.44", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 3}, 0.44, 3},
		{"top-k 3 u=.45", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 3}, 0.45, 2},
		{"top-k 3 u=.77", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 3}, 0.77, 2},
		{"top-k 3 u=.78", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 3}, 0.78, 1},
		{"top-k 1", p1234, sampling.Settings{Temperature: 1, TopP: 1, TopK: 1}, 0.99, 3},
		// Temperature 2 over log(1, 4, 9, 16) is softmax of log(1, 2, 3, 4).
		{"temperature 2 u=.41", logs(1, 4, 9, 16), sampling.Settings{Temperature: 2, TopP: 1, TopK: 0}, 0.41, 2},
		{"temperature 2 u=.39", logs(1, 4, 9, 16), sampling.Settings{Temperature: 2, TopP: 1, TopK: 0}, 0.39, 3},
		{"temperature 2 u=.91", logs(1, 4, 9, 16), sampling.Settings{Temperature: 2, TopP: 1, TopK: 0}, 0.91, 0},
		// Temperature 0.5 over log(1, 2, 3, 4) is softmax of log(1, 4, 9, 16):
		// masses /30: 16, 9, 4, 1 → cut points .5333, .8333, .9667.
		{"temperature .5 u=.53", p1234, sampling.Settings{Temperature: 0.5, TopP: 1, TopK: 0}, 0.53, 3},
		{"temperature .5 u=.54", p1234, sampling.Settings{Temperature: 0.5, TopP: 1, TopK: 0}, 0.54, 2},
		{"temperature .5 u=.96", p1234, sampling.Settings{Temperature: 0.5, TopP: 1, TopK: 0}, 0.96, 1},
		{"temperature .5 u=.97", p1234, sampling.Settings{Temperature: 0.5, TopP: 1, TopK: 0}, 0.97, 0},
		// Ties: equal logits order by lower index.
		{"ties u=.1", ties, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0.1, 0},
		{"ties u=.3", ties, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0.3, 1},
		{"ties u=.6", ties, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0.6, 2},
		{"ties u=.9", ties, sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}, 0.9, 3},
		{"ties top-k 2 u=.6", ties, sampling.Settings{Temperature: 1, TopP: 1, TopK: 2}, 0.6, 1},
		// Running mass 0.5 reaches top-p 0.5 exactly at two entries (exact in
		// float64: weights are exp(0) = 1).
		{"ties top-p .5 u=.9", ties, sampling.Settings{Temperature: 1, TopP: 0.5, TopK: 0}, 0.9, 1},
		{"ties top-p .5 u=.4", ties, sampling.Settings{Temperature: 1, TopP: 0.5, TopK: 0}, 0.4, 0},
		// Greedy: the largest logit, lowest index on ties, whatever u.
		{"greedy", []float32{0, 5, 5, 1}, sampling.Settings{Temperature: 0, TopP: 1, TopK: 0}, 0.99, 1},
		{"greedy with filters", []float32{-3, -1, -2}, sampling.Settings{Temperature: 0, TopP: 0.1, TopK: 1}, 0, 1},
		{"greedy negative", []float32{-7, -9}, sampling.Settings{Temperature: 0, TopP: 0.9, TopK: 30}, 0.5, 0},
	}
	for _, c := range cases {
		s, err := NewSampler(c.settings, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := s.SampleWith(c.logits, c.u)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}

// The frequencies of many draws follow the filtered, renormalised
// distribution: top-p .65 over p = (.1, .2, .3, .4) gives 4/7 and 3/7.
func TestSampleFrequenciesFollowTheFilteredDistribution(t *testing.T) {
	s, err := NewSampler(sampling.Settings{Temperature: 1, TopP: 0.65, TopK: 0}, 7)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, 4)
	const n = 20000
	logits := logs(1, 2, 3, 4)
	for f := 0; f < n; f++ {
		c, err := s.Sample(logits, f, f%10)
		if err != nil {
			t.Fatal(err)
		}
		counts[c]++
	}
	if counts[0] != 0 || counts[1] != 0 {
		t.Fatalf("filtered indices drawn: %v", counts)
	}
	// Binomial σ = sqrt(n·p·(1−p)) ≈ 70; allow 5σ.
	if want := n * 4.0 / 7; math.Abs(float64(counts[3])-want) > 350 {
		t.Fatalf("index 3 drawn %d times, want about %.0f", counts[3], want)
	}
}

func TestSamplerRefusesBadInput(t *testing.T) {
	s, _ := NewSampler(sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}, 0)
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		logits []float32
		want   string
	}{
		{[]float32{0, nan, 1}, "logit 1 is NaN"},
		{[]float32{inf, 0}, "logit 0 is +Inf"},
		{[]float32{0, -inf}, "logit 1 is -Inf"},
		{nil, "no logits"},
	} {
		if _, err := s.SampleWith(c.logits, 0.5); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("logits %v: error %v, want it to say %q", c.logits, err, c.want)
		}
	}
	greedy, _ := NewSampler(sampling.Settings{Temperature: 0, TopP: 1, TopK: 0}, 0)
	if _, err := greedy.SampleWith([]float32{0, nan}, 0); err == nil {
		t.Error("greedy accepted a NaN logit")
	}
	for _, bad := range []sampling.Settings{
		{Temperature: -1, TopP: 0.9, TopK: 30}, {Temperature: float32(math.NaN()), TopP: 0.9, TopK: 30}, {Temperature: float32(math.Inf(1)), TopP: 0.9, TopK: 30},
		{Temperature: 1, TopP: 0, TopK: 30}, {Temperature: 1, TopP: 1.5, TopK: 30}, {Temperature: 1, TopP: float32(math.NaN()), TopK: 30}, {Temperature: 1, TopP: 0.9, TopK: -1},
	} {
		if _, err := NewSampler(bad, 0); err == nil {
			t.Errorf("settings %+v accepted", bad)
		}
	}
}

func TestSampleIsAFunctionOfSeedFrameCodebook(t *testing.T) {
	logits := make([]float32, 4097)
	for i := range logits {
		logits[i] = float32(math.Sin(float64(i) * 0.37))
	}
	a, _ := NewSampler(sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}, 123)
	b, _ := NewSampler(sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}, 123)
	for f := 0; f < 20; f++ {
		for cb := 0; cb < 10; cb++ {
			x, _ := a.Sample(logits, f, cb)
			y, _ := b.Sample(logits, 19-f, cb) // interleave the other order
			_ = y
			z, _ := b.Sample(logits, f, cb)
			if x != z {
				t.Fatalf("frame %d codebook %d: %d then %d", f, cb, x, z)
			}
		}
	}
}

// referenceSample is the definition of SampleWith written the plain way:
// sort the whole vocabulary, filter, draw.
func referenceSample(logits []float32, set sampling.Settings, u float64) int {
	n := len(logits)
	if set.Temperature == 0 {
		best := 0
		for i := range logits {
			if logits[i] > logits[best] {
				best = i
			}
		}
		return best
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return logits[order[a]] > logits[order[b]] })
	T := float64(set.Temperature)
	m := float64(logits[order[0]]) / T
	w := func(i int) float64 { return math.Exp(float64(logits[i])/T - m) }
	var z float64
	for i := 0; i < n; i++ {
		z += w(i)
	}
	kept := n
	if set.TopP < 1 {
		var run float64
		for j, idx := range order {
			run += w(idx)
			if run >= float64(set.TopP)*z {
				kept = j + 1
				break
			}
		}
	}
	if set.TopK > 0 && set.TopK < kept {
		kept = set.TopK
	}
	var zk float64
	for _, idx := range order[:kept] {
		zk += w(idx)
	}
	var run float64
	for _, idx := range order[:kept] {
		run += w(idx)
		if u*zk < run {
			return idx
		}
	}
	return order[kept-1]
}

// SampleWith (heap selection of the top-k prefix) equals the plain
// definition on random vocabularies with ties, over the settings space.
func TestSampleWithEqualsPlainDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	settings := []sampling.Settings{{Temperature: 1, TopP: 1, TopK: 0}, {Temperature: 1, TopP: 0.9, TopK: 30}, {Temperature: 0.7, TopP: 0.5, TopK: 5}, {Temperature: 1.3, TopP: 1, TopK: 1}, {Temperature: 1, TopP: 0.99, TopK: 4096}, {Temperature: 0, TopP: 0.9, TopK: 30}, {Temperature: 2, TopP: 0.3, TopK: 0}, {Temperature: 1, TopP: 1, TopK: 7}}
	for trial := 0; trial < 300; trial++ {
		n := 1 + r.IntN(1100)
		logits := make([]float32, n)
		for i := range logits {
			// Coarse values make many ties.
			logits[i] = float32(r.IntN(40)) / 4
			if trial%2 == 0 {
				logits[i] = float32(r.NormFloat64() * 3)
			}
		}
		for _, set := range settings {
			s, err := NewSampler(set, 0)
			if err != nil {
				t.Fatal(err)
			}
			u := r.Float64()
			got, err := s.SampleWith(logits, u)
			if err != nil {
				t.Fatal(err)
			}
			if want := referenceSample(logits, set, u); got != want {
				t.Fatalf("trial %d, %d logits, %+v, u %v: got %d, want %d", trial, n, set, u, got, want)
			}
		}
	}
}

// FuzzSampleWith checks SampleWith against referenceSample (a full sort in
// float64, written plainly above) on any logits and settings: an error
// exactly when a logit is not finite or there are none, else the same index.
func FuzzSampleWith(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64}, float32(1), float32(0.9), 30, 0.5)
	f.Add([]byte{0, 0, 128, 63, 0, 0, 128, 63, 0, 0, 0, 64}, float32(0.5), float32(1), 0, 0.99)
	f.Add([]byte{0, 0, 128, 127, 0, 0, 0, 64}, float32(1), float32(0.9), 1, 0.1) // +Inf
	f.Fuzz(func(t *testing.T, raw []byte, temp, topP float32, topK int, u float64) {
		if math.IsNaN(u) || math.IsInf(u, 0) {
			return
		}
		u = math.Abs(math.Mod(u, 1))
		logits := make([]float32, len(raw)/4)
		finite := len(logits) > 0
		for i := range logits {
			logits[i] = math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
			finite = finite && !math.IsNaN(float64(logits[i])) && !math.IsInf(float64(logits[i]), 0)
		}
		set := sampling.Settings{Temperature: temp, TopP: topP, TopK: topK}
		s, err := NewSampler(set, 0)
		if err != nil {
			return
		}
		got, err := s.SampleWith(logits, u)
		if !finite {
			if err == nil {
				t.Fatalf("logits %v: index %d, want an error", logits, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("finite logits %v: %v", logits, err)
		}
		if want := referenceSample(logits, set, u); got != want {
			t.Fatalf("logits %v, %+v, u %v: index %d, reference %d", logits, set, u, got, want)
		}
	})
}

// BenchmarkSample times one draw at the default settings over a semantic
// (4097) and a residual (1024) vocabulary of random logits.
func BenchmarkSample(b *testing.B) {
	for _, n := range []int{4097, 1024} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 3))
			logits := make([]float32, n)
			for i := range logits {
				logits[i] = float32(r.NormFloat64() * 2)
			}
			s, err := NewSampler(sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}, 1)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; b.Loop(); i++ {
				if _, err := s.Sample(logits, i, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
