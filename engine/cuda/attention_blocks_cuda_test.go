//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"proscenium/engine/cpu"
)

// TestAttentionCoreBlocks runs calls of more rows than the layer's CoreRows
// (a long prefill pass: the core in blocks at host-written positions,
// Queue.attentionBlocks) and requires what the CPU gives for the whole call
// (attentionCore): the CPU's bits under exact, 1e-5 under fast, in the gated
// output of every row and in the cache. The calls end blocks ragged and
// start after rows cached by an earlier call, so a block's rows attend to
// earlier blocks' keys and to the previous calls'. (Each block's proj and
// attn rows at its offset, and its own position: taking block 0's position
// for every block, or every block's rows from the start of proj, fails it
// from the second block on.)
func TestAttentionCoreBlocks(t *testing.T) { eachNumerics(t, testAttentionCoreBlocks) }

func testAttentionCoreBlocks(t *testing.T) {
	r := newRand(t)
	for _, tc := range mixerShapes {
		t.Run(tc.name, func(t *testing.T) {
			const maxRows, coreRows, capacity = 200, 64, 600
			c := newAttentionCase(t, r, tc.g, maxRows, capacity, true)
			g, l := tc.g, &c.layer
			l.CoreRows = coreRows // the scratch, sized for maxRows everywhere, holds more than this needs
			pw, aw := l.G.ProjWidth(), g.Heads*g.HeadDim
			attnOff := l.G.scratchLayoutBlocks(maxRows, coreRows, capacity).attn
			posBlocks := alloc(t, 4*((maxRows+coreRows-1)/coreRows))
			var ref cpu.AttentionRef
			for i, n := range []int{150, 1, 200, 64, 65} {
				before := ref.Rows()
				proj := randNonZero(r, n*pw)
				var at []int32
				for s := 0; s < n; s += coreRows {
					at = append(at, int32(before+s))
				}
				if err := firstErr(Upload(dev, l.Scratch.Block, l.Scratch.Off, proj), Upload(dev, posBlocks, 0, at)); err != nil {
					t.Fatal(err)
				}
				maxLen := before + n
				if err := dev.Run(func(q *Queue) error { return q.attentionBlocks(l, n, Whole(posBlocks), maxLen, nil) }); err != nil {
					t.Fatal(err)
				}
				want := make([]float32, n*aw)
				cpu.AttentionCoreRef(want, proj, n, c.ref.QNorm, c.ref.KNorm, c.gref, &ref)
				if err := dev.Sync(); err != nil {
					t.Fatal(err)
				}
				got := make([]float32, n*aw)
				if err := Download(dev, got, l.Scratch.Block, l.Scratch.Off+attnOff); err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("call %d (%d rows after %d in %d blocks)", i, n, before, len(at))
				checkClose(t, what, got, want, 1e-5)
				checkBitsIfExact(t, what, got, want)
			}
			rows := ref.Rows()
			kv := download(t, l.KV.Block, int(l.G.KVBytes(capacity)/4))
			w := g.KVHeads * g.HeadDim
			checkClose(t, "cached keys", kv[:rows*w], ref.Keys(), 1e-5)
			checkBitsIfExact(t, "cached keys", kv[:rows*w], ref.Keys())
			checkBitsIfExact(t, "cached values", kv[capacity*w:capacity*w+rows*w], ref.Values())
		})
	}
}
