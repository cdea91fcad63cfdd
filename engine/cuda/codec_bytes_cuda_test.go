//go:build cuda

package cuda

import (
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/demo"
	"proscenium/engine/drama3"
)

// TestCodecBytes holds the codec's admission (CodecBytes, which the memory
// tier plans with) to what the device takes: NewCodec allocates exactly the
// weights' part, and a stream of DefaultDecodeChunk frames no more than the
// stream's part, for the demo codec and the S2 geometry with random
// weights. (Before, the weights were bounded as twice their float32 bytes:
// about four times what the FP16 packing takes, 1.0 GiB of a 30 GiB cap
// left unused at full geometry.)
func TestCodecBytes(t *testing.T) {
	s2Case(t, 1) // loads s2Ref
	demoRef, err := cpu.LoadCodecBytes(demo.CodecPTH, "engine/demo/codec.pth", drama3.CodecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		ref  *cpu.Codec
	}{{"demo", demoRef}, {"s2-random", s2Ref}} {
		plan := c.ref.Plan()
		weights, stream := codecBytes(&plan, DefaultDecodeChunk)
		before := dev.Pool.Stats(DeviceMem).Used
		g, err := NewCodec(dev, &plan)
		if err != nil {
			t.Fatal(err)
		}
		held := dev.Pool.Stats(DeviceMem).Used - before
		s, err := g.NewStream(DefaultDecodeChunk)
		if err != nil {
			g.Close()
			t.Fatal(err)
		}
		streamHeld := dev.Pool.Stats(DeviceMem).Used - before - held
		s.Close()
		g.Close()
		t.Logf("%s: weights %d bytes held, %d counted; a stream %d held, %d bounded", c.name, held, weights, streamHeld, stream)
		if held != weights || streamHeld > stream {
			t.Errorf("%s: the codec holds %d bytes of weights (CodecBytes counts %d) and a stream %d (bound %d)", c.name, held, weights, streamHeld, stream)
		}
	}
}
