package cuda

import (
	"strings"
	"testing"
)

// The mixers' geometry checks and byte counts (no device needed): the
// backbone admits and lays out its arena from these.

var (
	fullDeltaNet  = DeltaNetGeometry{Hidden: 2048, KeyHeads: 16, ValueHeads: 32, KeyDim: 128, ValueDim: 128, ConvKernel: 4, Eps: 1e-6}
	fullAttention = AttentionGeometry{Hidden: 2048, Heads: 16, KVHeads: 2, HeadDim: 256, RotaryDim: 64, RopeTheta: 1e7, Eps: 1e-6}
)

func TestDeltaNetGeometryValidate(t *testing.T) {
	if err := fullDeltaNet.Validate(); err != nil {
		t.Fatal(err)
	}
	odd := DeltaNetGeometry{Hidden: 136, KeyHeads: 2, ValueHeads: 6, KeyDim: 20, ValueDim: 28, ConvKernel: 4, Eps: 1e-6}
	if err := odd.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(g *DeltaNetGeometry)
		want string
	}{
		{"value heads not a multiple", func(g *DeltaNetGeometry) { g.ValueHeads = 33 }, "not a multiple"},
		{"value dim too wide", func(g *DeltaNetGeometry) { g.ValueDim = 1024 }, "value head dim"},
		{"too many state rows per thread", func(g *DeltaNetGeometry) { g.KeyDim = 1024 }, "state rows per thread"},
		{"conv kernel", func(g *DeltaNetGeometry) { g.ConvKernel = 9 }, "conv kernel"},
		{"hidden not a multiple of 8", func(g *DeltaNetGeometry) { g.Hidden = 2044 }, "multiples of 8"},
		{"zero heads", func(g *DeltaNetGeometry) { g.KeyHeads = 0 }, "bad geometry"},
	} {
		g := fullDeltaNet
		c.edit(&g)
		if err := g.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestDeltaNetClusterable holds the cluster step's geometry check to the
// kernel's bounds (kernels/deltanet.cu DNC_*): Drama 3's and the odd
// checkpoint's geometries run it, wider heads or a longer conv do not.
func TestDeltaNetClusterable(t *testing.T) {
	odd := DeltaNetGeometry{Hidden: 136, KeyHeads: 2, ValueHeads: 6, KeyDim: 20, ValueDim: 28, ConvKernel: 4, Eps: 1e-6}
	for _, c := range []struct {
		name string
		g    DeltaNetGeometry
		want bool
	}{
		{"full", fullDeltaNet, true},
		{"odd", odd, true},
		{"key dim 129", func() DeltaNetGeometry { g := fullDeltaNet; g.KeyDim = 129; return g }(), false},
		{"value dim 136", func() DeltaNetGeometry { g := fullDeltaNet; g.ValueDim = 136; return g }(), false},
		{"value dim 120", func() DeltaNetGeometry { g := fullDeltaNet; g.ValueDim = 120; return g }(), true},
		{"conv 5", func() DeltaNetGeometry { g := fullDeltaNet; g.ConvKernel = 5; return g }(), false},
		{"conv 2", func() DeltaNetGeometry { g := fullDeltaNet; g.ConvKernel = 2; return g }(), true},
	} {
		if got := c.g.clusterable(); got != c.want {
			t.Errorf("%s: clusterable %v, want %v", c.name, got, c.want)
		}
	}
}

func TestDeltaNetBytes(t *testing.T) {
	g := fullDeltaNet
	// conv window per value head: 3 rows × 32 heads × (128 + 128 + 128); state 32 × 128 × 128.
	if got, want := g.StateBytes(), int64(4*(3*32*384+32*128*128)); got != want {
		t.Errorf("state bytes %d, want %d", got, want)
	}
	if got, want := g.ProjWidth(), 8192+4096+64; got != want {
		t.Errorf("projection width %d, want %d", got, want)
	}
	for _, rows := range []int{1, 3, 60, 301} {
		core := g.scratchLayout(rows)
		if core%256 != 0 || core < 4*int64(rows*g.ProjWidth()) {
			t.Errorf("%d rows: core at %d", rows, core)
		}
		end := core + 4*int64(rows*32*128)
		if rows > 1 {
			// The chunked form's regions: q, k, W and v, Δ0 per head and row, β, g
			// and c per head and row, two [64, 64] matrices per head and chunk.
			chunks := int64((rows + 63) / 64)
			s := g.chunkScratch(rows)
			if s.qn < end || s.qn%256 != 0 {
				t.Errorf("%d rows: chunk regions at %d, before %d or unaligned", rows, s.qn, end)
			}
			need := 4 * (int64(rows)*32*(3*128+2*128+3) + 2*32*chunks*64*64)
			if s.end-s.qn < need || s.end-s.qn > need+10*256 {
				t.Errorf("%d rows: chunk regions %d bytes, want %d (+ alignment)", rows, s.end-s.qn, need)
			}
			end = s.end
		}
		if got := g.ScratchBytes(rows); got != end {
			t.Errorf("%d rows: scratch %d, want %d", rows, got, end)
		}
	}
}

func TestAttentionGeometry(t *testing.T) {
	if err := fullAttention.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(g *AttentionGeometry)
		want string
	}{
		{"heads not a multiple", func(g *AttentionGeometry) { g.KVHeads = 3 }, "not a multiple"},
		{"head dim", func(g *AttentionGeometry) { g.HeadDim = 512 }, "head dim"},
		{"odd rotary", func(g *AttentionGeometry) { g.RotaryDim = 63 }, "rotary"},
		{"rotary past head", func(g *AttentionGeometry) { g.RotaryDim = 258 }, "rotary"},
		{"theta", func(g *AttentionGeometry) { g.RopeTheta = 0 }, "theta"},
	} {
		g := fullAttention
		c.edit(&g)
		if err := g.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
	g := fullAttention
	if got, want := g.KVBytes(8192), int64(2*4*8192*2*256); got != want {
		t.Errorf("kv bytes %d, want %d", got, want)
	}
	for _, c := range []struct{ rows, capacity int }{{1, 64}, {1, 8192}, {300, 400}, {7, 5}, {64, 4096}} {
		l := g.scratchLayout(c.rows, c.capacity)
		r := int64(c.rows)
		// The partials of every call: a prefill of up to rows rows (its
		// splits, attnSplits, at most 16) or a step of up to 8 rows (32
		// splits, or the capacity's rows).
		parts := max(r*int64(attnSplits(c.rows, 1<<30, c.capacity)), min(r, 8)*int64(min(32, c.capacity)))
		if l.qn%256 != 0 || l.scores%256 != 0 || l.smax%256 != 0 || l.part%256 != 0 || l.attn%256 != 0 ||
			l.qn < 4*r*int64(g.ProjWidth()) || l.scores-l.qn < 4*r*16*256 || l.smax-l.scores < 4*r*16*int64(c.capacity) ||
			l.part-l.smax < 4*16*parts || l.attn-l.part < 8*16*parts*257 {
			t.Errorf("%+v: layout %+v", c, l)
		}
		if got := g.ScratchBytes(c.rows, c.capacity); got != l.attn+4*r*16*256 {
			t.Errorf("%+v: scratch %d", c, got)
		}
	}
}

func TestAttentionSplits(t *testing.T) {
	for _, c := range []struct{ n, maxLen, capacity, want int }{
		{1, 8192, 8192, 32}, // a step: always the most, shared out on the device
		{1, 61, 8192, 32},
		{1, 5, 5, 5}, // never more blocks than cacheable rows
		{60, 60, 8192, 1},
		{300, 300, 400, 3},
		{129, 129, 400, 2},
		{64, 8000, 8192, 16}, // a prefill's splits take more rows past 16·128
		{64, 1000, 8192, 8},
		{2, 2, 8192, 1},
	} {
		if got := attnSplits(c.n, c.maxLen, c.capacity); got != c.want {
			t.Errorf("%d rows, bound %d, capacity %d: %d splits, want %d", c.n, c.maxLen, c.capacity, got, c.want)
		}
	}
}
