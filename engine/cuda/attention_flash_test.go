package cuda

import (
	"strings"
	"testing"

	"proscenium/engine/cuda/kernel"
)

// The flash prompt attention's grid and scratch (no device needed).

var oddAttention = AttentionGeometry{Hidden: 136, Heads: 3, KVHeads: 1, HeadDim: 24, RotaryDim: 12, RopeTheta: 1e6, Eps: 1e-6}

func TestFlashSplits(t *testing.T) {
	for _, c := range []struct {
		name        string
		g           AttentionGeometry
		n, maxLen   int
		tiles, want int
	}{
		// 8 heads share each of 2 KV heads: 16 vectors a block are 2 rows.
		{"300 rows fill the device", fullAttention, 300, 300, 150, 1},
		{"512 rows", fullAttention, 512, 512, 256, 1},
		{"264 rows: exactly the target", fullAttention, 264, 264, 132, 1},
		{"60 rows from empty: too few keys to split", fullAttention, 60, 60, 30, 1},
		{"60 rows after a 700-row voice", fullAttention, 60, 760, 30, 5},
		{"one row after 100", fullAttention, 1, 101, 1, 2},
		{"one row after 4000: at most 16", fullAttention, 1, 4001, 1, 16},
		{"64 rows after 100", fullAttention, 64, 164, 32, 3},
		{"odd: 300 rows, 3 heads on one KV head", oddAttention, 300, 400, 57, 5},
	} {
		if got := c.g.flashTiles(c.n); got != c.tiles {
			t.Errorf("%s: %d tiles, want %d", c.name, got, c.tiles)
		}
		if got := c.g.flashSplits(c.n, c.maxLen); got != c.want {
			t.Errorf("%s: %d splits, want %d", c.name, got, c.want)
		}
	}
}

// TestFlash2Splits: attn_flash2_fast's grid (attn13): 64 vectors a block
// (8 rows of the full geometry), split towards two blocks an SM.
func TestFlash2Splits(t *testing.T) {
	for _, c := range []struct {
		name        string
		g           AttentionGeometry
		n, maxLen   int
		tiles, want int
	}{
		{"300 rows: 76 blocks, 4 splits", fullAttention, 300, 300, 38, 4},
		{"700 rows: 176 blocks, 2 splits", fullAttention, 700, 700, 88, 2},
		{"1056 rows fill the device", fullAttention, 1056, 1056, 132, 1},
		{"60 rows from empty: 2 tiles of keys, 2 splits", fullAttention, 60, 60, 8, 2},
		{"60 rows after a 700-row voice", fullAttention, 60, 760, 8, 16},
		{"one row after 4000: at most 16", fullAttention, 1, 4001, 1, 16},
		{"odd: 300 rows, 3 heads on one KV head", oddAttention, 300, 400, 15, 13},
		{"one row after 40: one tile", fullAttention, 1, 41, 1, 2},
	} {
		if got := c.g.flash2Tiles(c.n); got != c.tiles {
			t.Errorf("%s: %d tiles, want %d", c.name, got, c.tiles)
		}
		if got := c.g.flash2Splits(c.n, c.maxLen); got != c.want {
			t.Errorf("%s: %d splits, want %d", c.name, got, c.want)
		}
	}
	// The dynamic shared memory at head dim 256: two blocks in an H200
	// SM's 228 KiB (each block's 1 KiB reserve beside it).
	if b := fullAttention.flash2Smem(); b != 108800 || 2*(b+1024) > 228*1024 {
		t.Errorf("flash2 shared memory %d bytes", b)
	}
}

func TestFlashScratch(t *testing.T) {
	if !fullAttention.flashSupports() || !oddAttention.flashSupports() {
		t.Fatal("the flash core must take Drama 3's geometry and the odd checkpoint's")
	}
	if g := (AttentionGeometry{Heads: 2, KVHeads: 1, HeadDim: 6}); g.flashSupports() {
		t.Error("head dim 6 is not float4s")
	}
	for _, c := range []struct {
		g                    AttentionGeometry
		rows, core, capacity int
	}{{fullAttention, 512, 64, 4096}, {fullAttention, 512, 64, 600}, {fullAttention, 512, 8, 600}, {fullAttention, 80, 80, 200}, {oddAttention, 512, 64, 1100}, {oddAttention, 4, 4, 4}} {
		g := c.g
		l := g.scratchLayoutBlocks(c.rows, c.core, c.capacity)
		f := g.flashLayout(c.rows, c.capacity)
		// The queries of every row, then every call's partials, within the
		// core's regions and before attn, aligned.
		if l.flashQn != l.qn || l.flashPart != l.qn+f.part || l.flashPart%256 != 0 ||
			l.flashPart-l.flashQn < 4*int64(c.rows*g.Heads*g.HeadDim) || l.attn < l.qn+f.end {
			t.Errorf("%+v: layout %+v, flash %+v", c, l, f)
		}
		for n := 1; n <= c.rows; n++ {
			if s := max(g.flashSplits(n, c.capacity), g.flash2Splits(n, c.capacity), g.flashMMASplits(n, c.capacity)); s > 1 && int64(n*g.Heads*s)*int64(flashPartHead+g.HeadDim)*4 > f.end-f.part {
				t.Errorf("%+v: %d rows in %d splits overflow the partials", c, n, s)
			}
		}
	}
	// Drama 3's backbone plan (512-row passes, 64-row core blocks, a
	// 4096-row context): the flash regions but the tensor-core kernels' parts
	// fit inside the core blocks' (the scores of 64 rows over the context and
	// their float64 partials); the parts (the queries' FP16 pairs, 8 MiB, and
	// the cache's keys and values, 16 MiB) take the scratch past them.
	g := fullAttention
	c := int64(64)
	parts := partItems(64, 4096)
	core := alignUp(4*512*int64(g.ProjWidth())) + alignUp(4*c*16*256) + alignUp(4*c*16*4096) + alignUp(4*16*parts) + alignUp(8*16*parts*257)
	l := g.scratchLayoutBlocks(512, 64, 4096)
	f := g.flashLayout(512, 4096)
	if m := f.mma; m.qp < f.part+alignUp(4*g.flashPartFloats(512, 4096)) || m.qinv-m.qp != 512*16*2*256*2 ||
		m.vp-m.kp != 4096*2*2*256*2 || m.vexp-m.kinv != 2*4096*4 || f.end != m.vexp+alignUp(2*4096/32*4) {
		t.Errorf("full geometry, 512 rows: the parts' regions %+v (flash %+v)", m, f)
	}
	if want := l.qn + f.end; f.end <= core-l.qn || l.attn != want {
		t.Errorf("full geometry, 512 rows: attn at %d, want %d (the parts' end; the core blocks end at %d)", l.attn, want, core)
	}
	if l.flashMMA.qp != l.qn+f.mma.qp || l.flashMMA.vexp != l.qn+f.mma.vexp || l.flashMMA.qp%256 != 0 || l.flashMMA.vexp%256 != 0 {
		t.Errorf("full geometry, 512 rows: the parts at %+v", l.flashMMA)
	}
}

// TestFlashMMAKernel: the tensor-core instance for a head dim is the
// smallest whose HD holds it, none past 256 or off a multiple of 8, and its
// shared memory is FMMA_SMEM's; the switch's values.
func TestFlashMMAKernel(t *testing.T) {
	for _, c := range []struct {
		hd, HD int
		want   kernel.AttnFlashMmaFastKernel
	}{{8, 32, kernel.AttnFlashMmaFastHd32}, {24, 32, kernel.AttnFlashMmaFastHd32}, {32, 32, kernel.AttnFlashMmaFastHd32},
		{40, 64, kernel.AttnFlashMmaFastHd64}, {128, 128, kernel.AttnFlashMmaFastHd128}, {136, 256, kernel.AttnFlashMmaFastHd256},
		{256, 256, kernel.AttnFlashMmaFastHd256}, {260, 0, ""}, {12, 0, ""}, {100, 0, ""}} {
		k, hd, _, ok := AttentionGeometry{HeadDim: c.hd}.flashMMAKernel(coreFlashMMAK32)
		if k != c.want || hd != c.HD || ok != (c.want != "") {
			t.Errorf("head dim %d: %q (HD %d), %v; want %q (HD %d)", c.hd, k, hd, ok, c.want, c.HD)
		}
		if k16, _, _, _ := (AttentionGeometry{HeadDim: c.hd}).flashMMAKernel(coreFlashMMA); c.HD != 256 && k16 != k {
			t.Errorf("head dim %d: the default %q, want %q (no 16-key tiles of HD %d)", c.hd, k16, k, c.HD)
		}
	}
	// (2·64 + 4·32)·264·2 + 32·4 bytes; with 16-key tiles (2·64 + 4·16)·264·2 + 16·4.
	if _, _, smem, _ := fullAttention.flashMMAKernel(coreFlashMMAK32); smem != 135296 {
		t.Errorf("full geometry: %d bytes of shared memory, want 135296", smem)
	}
	if k, _, smem, _ := fullAttention.flashMMAKernel(coreFlashMMA); k != kernel.AttnFlashMmaFastHd256k16 || smem != 101440 {
		t.Errorf("full geometry, 16-key tiles: %q, %d bytes of shared memory, want 101440", k, smem)
	}
	if _, _, _, ok := fullAttention.flashMMAKernel(coreFlash2); ok {
		t.Error("flash2 has a tensor-core instance")
	}
	prev := attnMMA
	defer func() { attnMMA = prev }()
	for _, c := range []struct {
		v           string
		short, long bool
	}{{"", false, true}, {"on", true, true}, {"off", false, false}, {"k32", true, true}} {
		if err := AttnMMASetting(c.v); err != nil {
			t.Errorf("%q: %v", c.v, err)
		}
		attnMMA = c.v
		if s, l := useFlashMMA(flashMMAMinRows-1), useFlashMMA(flashMMAMinRows); s != c.short || l != c.long {
			t.Errorf("%q: %v, %v; want %v, %v", c.v, s, l, c.short, c.long)
		}
	}
	if err := AttnMMASetting("f16"); err == nil || !strings.Contains(err.Error(), AttnMMAEnv) {
		t.Errorf("\"f16\": %v, want an error naming %s", err, AttnMMAEnv)
	}
}
