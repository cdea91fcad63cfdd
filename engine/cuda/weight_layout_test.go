package cuda

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// hostArena fills a host copy of the arena through the loader's own chunk
// path (what LoadWeights copies to the device), with small staging buffers
// so tensors arrive in several chunks.
func hostArena(t *testing.T, ck *drama3.Checkpoint, l *WeightLayout) []byte {
	t.Helper()
	arena := make([]byte, l.Bytes)
	written := make([]bool, l.Bytes)
	fill := newArenaFiller(l, func(dst int64, src []byte) error {
		for i := range src {
			if written[dst+int64(i)] {
				t.Fatalf("arena byte %d written twice", dst+int64(i))
			}
			written[dst+int64(i)] = true
		}
		copy(arena[dst:], src)
		return nil
	})
	if _, err := ck.Index.Load(checkpoint.LoadOptions{BufferSize: 3 * checkpoint.DirectAlign, Buffered: true}, fill.chunk); err != nil {
		t.Fatal(err)
	}
	if err := fill.check(); err != nil {
		t.Fatal(err)
	}
	return arena
}

func f32At(b []byte, off int64) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
}

func TestWeightLayoutPlacesEveryTensor(t *testing.T) {
	for _, geom := range []string{"like", "odd"} {
		t.Run(geom, func(t *testing.T) {
			ck, err := drama3.Load(filepath.Join("..", "cpu", "testdata", "backbone", "ckpt", geom))
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			w := ck.Weights
			l, err := LayoutWeights(w)
			if err != nil {
				t.Fatal(err)
			}
			if l.StoredBytes() != w.StoredBytes() {
				t.Fatalf("layout places %d stored bytes, the bound tensors are %d", l.StoredBytes(), w.StoredBytes())
			}
			arena := hostArena(t, ck, l)

			// Dense tensors: as stored, or widened to float32.
			for p, dt := range l.Tensors {
				v, err := w.Float32(p)
				if err != nil {
					t.Fatal(err)
				}
				for i, want := range v {
					var got float32
					switch dt.DType {
					case checkpoint.F32:
						got = f32At(arena, dt.Off+int64(4*i))
					case checkpoint.BF16:
						got = checkpoint.BF16ToF32(binary.LittleEndian.Uint16(arena[dt.Off+int64(2*i):]))
					default:
						t.Fatalf("%s: device dtype %s", p.Name, dt.DType)
					}
					if got != want {
						t.Fatalf("%s[%d] = %v on the device, %v stored", p.Name, i, got, want)
					}
				}
			}

			// Experts: the packed matrices dequantise to the stored ones, the padding is zero.
			for li, x := range l.Experts {
				gate, up, down, err := w.ExpertFloat32(li)
				if err != nil {
					t.Fatal(err)
				}
				if !x.FP8 {
					t.Fatalf("layer %d: experts not FP8", li)
				}
				sgu, sdn := (x.Hp+127)/128, (x.Ip+127)/128
				guAt := func(e, r, c int) float32 {
					q := arena[x.GateUp+int64(e)*x.GateUpMatBytes+int64(r*x.Hp+c)]
					s := f32At(arena, x.GateUpS+int64(e*x.GateUpScaleCount+(r/128)*sgu+c/128)*4)
					return checkpoint.F8E4M3ToF32(q) * s
				}
				dnAt := func(e, r, c int) float32 {
					q := arena[x.Down+int64(e)*x.DownMatBytes+int64(r*x.Ip+c)]
					s := f32At(arena, x.DownS+int64(e*x.DownScaleCount+(r/128)*sdn+c/128)*4)
					return checkpoint.F8E4M3ToF32(q) * s
				}
				for e := 0; e < x.Experts; e++ {
					for r := 0; r < 2*x.P; r++ {
						for c := 0; c < x.Hp; c++ {
							var want float32
							switch {
							case c >= x.H:
							case r < x.I:
								want = gate[e][r*x.H+c]
							case r >= x.P && r < x.P+x.I:
								want = up[e][(r-x.P)*x.H+c]
							}
							if got := guAt(e, r, c); got != want {
								t.Fatalf("layer %d expert %d gate_up[%d][%d] = %v, want %v", li, e, r, c, got, want)
							}
						}
					}
					for r := 0; r < x.H; r++ {
						for c := 0; c < x.Ip; c++ {
							var want float32
							if c < x.I {
								want = down[e][r*x.I+c]
							}
							if got := dnAt(e, r, c); got != want {
								t.Fatalf("layer %d expert %d down[%d][%d] = %v, want %v", li, e, r, c, got, want)
							}
						}
					}
				}
			}
		})
	}
}

func TestWeightLayoutRefusesOtherFP8Blocks(t *testing.T) {
	ck, err := drama3.Load(filepath.Join("..", "cpu", "testdata", "backbone", "ckpt", "odd"))
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	ck.Config.Quant.BlockRows, ck.Config.Quant.BlockCols = 64, 64
	_, err = LayoutWeights(ck.Weights)
	if err == nil || !strings.Contains(err.Error(), "[64, 64]") || !strings.Contains(err.Error(), "128×128") {
		t.Fatalf("err = %v, want a refusal naming [64, 64] and 128×128", err)
	}
}
