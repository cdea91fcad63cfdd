//go:build cuda

package cuda

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/demo"
	"proscenium/engine/drama3"
)

// The GPU codec against the CPU reference (engine/cpu, itself within 1.2e-6
// of the public reference code) on the shared/oracle goldens and on the S2
// geometry with random weights, and chunked decodes against the whole decode
// on the GPU, bit for bit. The goldens are read from PROSCENIUM_CODEC_TESTDATA
// (a copy of engine/cpu/testdata/codec) or from the repository.

// codecFP16Tol is the relative L2 error allowed to the FP16 tensor-core path.
const codecFP16Tol = 2e-3

func codecTestdata() string {
	if d := os.Getenv("PROSCENIUM_CODEC_TESTDATA"); d != "" {
		return d
	}
	return filepath.Join("..", "cpu", "testdata", "codec")
}

type gpuCodecCase struct {
	name   string
	ref    *cpu.Codec
	gpu    *Codec
	codes  []int32
	nf     int
	golden *cpu.CodecStages // the public reference's outputs (nil: none)
}

func loadGoldenCase(t *testing.T, name string) *gpuCodecCase {
	t.Helper()
	dir := filepath.Join(codecTestdata(), name)
	raw, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Geometry struct {
			Window int `json:"window"`
		} `json:"geometry"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	opt := drama3.CodecOptions{Window: meta.Geometry.Window}
	var ref *cpu.Codec
	if _, err := os.Stat(filepath.Join(dir, "codec.pth")); err == nil {
		ref, err = cpu.LoadCodecFile(filepath.Join(dir, "codec.pth"), opt)
		if err != nil {
			t.Fatal(err)
		}
	} else if ref, err = cpu.LoadCodecBytes(demo.CodecPTH, "engine/demo/codec.pth", opt); err != nil {
		t.Fatal(err)
	}
	ct, err := checkpoint.ReadNPYFile(filepath.Join(dir, "codes.npy"))
	if err != nil {
		t.Fatal(err)
	}
	codes, nf, err := cpu.CodecCodesFromNPY(ct)
	if err != nil {
		t.Fatal(err)
	}
	golden := &cpu.CodecStages{}
	for _, s := range []struct {
		file string
		dst  *[]float32
	}{{"z_rvq.npy", &golden.ZRVQ}, {"z_post.npy", &golden.ZPost}, {"z_up.npy", &golden.ZUp}, {"pcm.npy", &golden.PCM}} {
		tn, err := checkpoint.ReadNPYFile(filepath.Join(dir, s.file))
		if err != nil {
			t.Fatal(err)
		}
		if *s.dst, err = tn.Float32s(); err != nil {
			t.Fatal(err)
		}
	}
	return newGPUCase(t, name, ref, codes, nf, golden)
}

func newGPUCase(t *testing.T, name string, ref *cpu.Codec, codes []int32, nf int, golden *cpu.CodecStages) *gpuCodecCase {
	t.Helper()
	plan := ref.Plan()
	g, err := NewCodec(dev, &plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return &gpuCodecCase{name: name, ref: ref, gpu: g, codes: codes, nf: nf, golden: golden}
}

var (
	s2Once sync.Once
	s2Ref  *cpu.Codec
	s2Err  error
)

// s2Case is the S2 geometry (latent 1024, 8 layers of 16 heads, window 128,
// decoder 1536, strides 8 8 4 2) with random weights, and nf random frames.
func s2Case(t *testing.T, nf int) *gpuCodecCase {
	t.Helper()
	s2Once.Do(func() { s2Ref, s2Err = cpu.LoadCodec(cpu.CodecRandomTensors(11, 1024, 1536, 8), drama3.CodecOptions{}) })
	if s2Err != nil {
		t.Fatal(s2Err)
	}
	g := s2Ref.Geometry()
	if g.Latent != 1024 || g.PostLayers != 8 || g.PostHeads != 16 || g.Window != 128 || g.DecoderDim != 1536 ||
		fmt.Sprint(g.DecoderStrides) != "[8 8 4 2]" || g.HistoryFrames != 1026 {
		t.Fatalf("not the S2 geometry: %+v", g)
	}
	return newGPUCase(t, "s2-random", s2Ref, cpu.CodecRandomCodes(12, nf), nf, nil)
}

// relErr is ‖a − b‖/‖b‖ (NaN if a holds a NaN or the lengths differ).
func relErr(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.NaN()
	}
	var num, den float64
	for i := range b {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	return math.Sqrt(num / den)
}

func snrDB(rel float64) float64 { return -20 * math.Log10(rel) }

// checkStages compares GPU stage outputs with a reference's.
func checkStages(t *testing.T, what string, got *CodecStages, want *cpu.CodecStages) {
	t.Helper()
	for _, s := range []struct {
		name      string
		got, want []float32
		tol       float64
	}{{"z_rvq", got.ZRVQ, want.ZRVQ, 1e-5}, {"z_post", got.ZPost, want.ZPost, codecFP16Tol},
		{"z_up", got.ZUp, want.ZUp, codecFP16Tol}, {"pcm", got.PCM, want.PCM, codecFP16Tol}} {
		e := relErr(s.got, s.want)
		t.Logf("%s %s: relative L2 %.3g (SNR %.1f dB)", what, s.name, e, snrDB(e))
		if !(e <= s.tol) {
			t.Errorf("%s %s: relative L2 error %.3g above %.3g", what, s.name, e, s.tol)
		}
	}
}

func TestCodecGPUMatchesReference(t *testing.T) {
	for _, name := range []string{"tiny-w8", "tiny-w128"} {
		c := loadGoldenCase(t, name)
		got, err := c.gpu.DecodeStages(c.codes)
		if err != nil {
			t.Fatal(err)
		}
		checkStages(t, name+" vs public reference", got, c.golden)
		cpuOut, err := c.ref.DecodeStages(c.codes)
		if err != nil {
			t.Fatal(err)
		}
		checkStages(t, name+" vs CPU", got, cpuOut)
	}
	c := s2Case(t, 24)
	got, err := c.gpu.DecodeStages(c.codes)
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.ref.DecodeStages(c.codes)
	if err != nil {
		t.Fatal(err)
	}
	checkStages(t, "S2 random vs CPU", got, want)
}

// policyBounds are chunk boundaries [0, …, nf] for the take's policy
// (engine/drama3's default: 1, 2, 4, 8, 16, 32, 32, …).
func policyBounds(t *testing.T, nf int) []int {
	ch, err := drama3.NewChunker(drama3.DefaultChunkPolicy())
	if err != nil {
		t.Fatal(err)
	}
	b := []int{0}
	for {
		_, to, ok := ch.Next(nf)
		if !ok {
			break
		}
		b = append(b, to)
	}
	if _, to, ok := ch.Rest(nf); ok {
		b = append(b, to)
	}
	return b
}

func irregularBounds(nf int) []int {
	b := []int{0}
	for i, at := 0, 0; at < nf; i++ {
		at = min(nf, at+[]int{3, 1, 7, 2, 11, 5, 32, 17}[i%8])
		b = append(b, at)
	}
	return b
}

func oneByOne(nf int) []int {
	b := make([]int, nf+1)
	for i := range b {
		b[i] = i
	}
	return b
}

func sameBits(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// checkChunked pushes the take through a stream in the given chunks, every
// scratch buffer poisoned with NaN before each, and compares each chunk with
// the whole decode, bit for bit.
func checkChunked(t *testing.T, c *gpuCodecCase, policy string, bounds []int, whole []float32) {
	t.Helper()
	nb, spf := c.ref.Geometry().Codebooks(), c.ref.Geometry().SamplesPerFrame
	maxChunk := 1
	for i := 1; i < len(bounds); i++ {
		maxChunk = max(maxChunk, bounds[i]-bounds[i-1])
	}
	s, err := c.gpu.NewStream(maxChunk)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i < len(bounds); i++ {
		from, to := bounds[i-1], bounds[i]
		if err := s.poison(); err != nil {
			t.Fatal(err)
		}
		got, err := s.Push(c.codes[from*nb : to*nb])
		if err != nil {
			t.Fatal(err)
		}
		if j := sameBits(got, whole[from*spf:to*spf]); j >= 0 {
			t.Fatalf("%s %s: chunk [%d,%d) differs from the whole decode at sample %d (%v vs %v)",
				c.name, policy, from, to, from*spf+j, got[max(j, 0)], whole[from*spf+max(j, 0)])
		}
	}
	t.Logf("%s %s: %d chunks over %d frames equal the whole decode bit for bit", c.name, policy, len(bounds)-1, c.nf)
}

func TestCodecGPUChunkedEqualsWhole(t *testing.T) {
	tiny := loadGoldenCase(t, "tiny-w8")
	cases := []*gpuCodecCase{tiny, s2Case(t, 1100)} // S2: past the 1026-frame receptive field
	for _, c := range cases {
		s, err := c.gpu.NewStream(c.nf)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.poison(); err != nil {
			t.Fatal(err)
		}
		whole, err := s.Push(c.codes)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range whole {
			if v != v {
				t.Fatalf("%s: the whole decode holds NaN", c.name)
			}
		}
		checkChunked(t, c, "one frame at a time", oneByOne(c.nf), whole)
		checkChunked(t, c, "the take's policy", policyBounds(t, c.nf), whole)
		checkChunked(t, c, "irregular", irregularBounds(c.nf), whole)

		// A stream started at from − HistoryFrames without history gives the
		// whole decode's samples from `from` on (the receptive field).
		g := c.ref.Geometry()
		for _, from := range []int{g.HistoryFrames + 1, c.nf - 3} {
			to := min(c.nf, from+3)
			first := from - g.HistoryFrames
			st, err := c.gpu.NewStreamAt(first, to-first)
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Push(c.codes[first*g.Codebooks() : to*g.Codebooks()])
			st.Close()
			if err != nil {
				t.Fatal(err)
			}
			off := (from - first) * g.SamplesPerFrame
			if j := sameBits(got[off:], whole[from*g.SamplesPerFrame:to*g.SamplesPerFrame]); j >= 0 {
				t.Errorf("%s: stream from frame %d, frames [%d,%d) differ from the whole decode at sample %d",
					c.name, first, from, to, from*g.SamplesPerFrame+j)
			}
		}
	}
}

func TestCodecGPUBadInput(t *testing.T) {
	c := loadGoldenCase(t, "tiny-w8")
	g := c.ref.Geometry()
	nb, spf := g.Codebooks(), g.SamplesPerFrame
	whole, err := c.gpu.Decode(c.codes[:6*nb])
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.gpu.NewStream(4)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	neg := append([]int32(nil), c.codes[:2*nb]...)
	neg[nb+7] = -1
	for _, tc := range []struct {
		codes []int32
		want  string
	}{{neg, "frame 1 codebook 7"}, {c.codes[:5*nb], "holds 4"}, {c.codes[:nb-1], "whole"}, {nil, "whole"}} {
		if _, err := s.Push(tc.codes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Push(%d codes): error %v, want one saying %q", len(tc.codes), err, tc.want)
		}
	}
	// The refused pushes changed nothing.
	for _, b := range [][2]int{{0, 2}, {2, 6}} {
		got, err := s.Push(c.codes[b[0]*nb : b[1]*nb])
		if err != nil {
			t.Fatal(err)
		}
		if j := sameBits(got, whole[b[0]*spf:b[1]*spf]); j >= 0 {
			t.Fatalf("after refused pushes, chunk %v differs at sample %d", b, j)
		}
	}
	// Codes above a codebook's last entry decode as the last entry.
	over := append([]int32(nil), c.codes[:6*nb]...)
	clamped := append([]int32(nil), over...)
	for i := range over {
		last := int32(g.ResidualCodes - 1)
		if i%nb == 0 {
			last = int32(g.SemanticCodes - 1)
		}
		if i%3 == 0 {
			over[i], clamped[i] = last+1+int32(i), last
		}
	}
	a, err := c.gpu.Decode(over)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.gpu.Decode(clamped)
	if err != nil {
		t.Fatal(err)
	}
	if j := sameBits(a, b); j >= 0 {
		t.Errorf("codes above the last entry do not decode as the last entry (sample %d)", j)
	}
}
