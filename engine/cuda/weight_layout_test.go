package cuda

import (
	"encoding/binary"
	"math"
	"os"
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
	arena, _ := hostArenaTier(t, ck, l)
	return arena
}

// hostArenaTier is hostArena for a layout with experts in host memory: it
// also fills each host layer's block.
func hostArenaTier(t *testing.T, ck *drama3.Checkpoint, l *WeightLayout) ([]byte, map[int][]byte) {
	t.Helper()
	arena := make([]byte, l.Bytes)
	host := map[int][]byte{}
	written := map[int][]bool{-1: make([]bool, l.Bytes)}
	for i, x := range l.Experts {
		if x.Host {
			host[i] = make([]byte, x.SpanBytes())
			written[i] = make([]bool, x.SpanBytes())
		}
	}
	fill := newArenaFiller(l, func(hostLayer int, dst int64, src []byte) error {
		to, w := arena, written[-1]
		if hostLayer >= 0 {
			to, w = host[hostLayer], written[hostLayer]
			if to == nil {
				t.Fatalf("a copy into host layer %d, which is on the device", hostLayer)
			}
		}
		for i := range src {
			if w[dst+int64(i)] {
				t.Fatalf("byte %d of block %d written twice", dst+int64(i), hostLayer)
			}
			w[dst+int64(i)] = true
		}
		copy(to[dst:], src)
		return nil
	})
	if _, err := ck.Index.Load(checkpoint.LoadOptions{BufferSize: 3 * checkpoint.DirectAlign, Buffered: true}, fill.chunk); err != nil {
		t.Fatal(err)
	}
	if err := fill.check(); err != nil {
		t.Fatal(err)
	}
	return arena, host
}

// TestWeightLayoutTier: with the experts of the last layers in host memory,
// the arena is the whole layout's with those layers' expert spans cut out,
// and each host block is its span, byte for byte.
func TestWeightLayoutTier(t *testing.T) {
	for _, dir := range layoutCheckpoints(t) {
		ck, err := drama3.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := LayoutWeights(ck.Weights)
		if err != nil {
			t.Fatal(err)
		}
		full := hostArena(t, ck, whole)
		for _, k := range []int{0, len(whole.Experts) / 2, len(whole.Experts)} {
			l, err := LayoutWeightsTier(ck.Weights, k)
			if err != nil {
				t.Fatal(err)
			}
			arena, host := hostArenaTier(t, ck, l)
			var cut []byte
			var hostBytes int64
			from := int64(0)
			for i, x := range whole.Experts[k:] {
				i += k
				span := x.SpanBytes()
				if !l.Experts[i].Host || l.Experts[i].GateUp != 0 || l.Experts[i].SpanBytes() != span {
					t.Fatalf("%s, %d device layers: layer %d's pack %+v", dir, k, i, l.Experts[i])
				}
				if string(host[i]) != string(full[x.GateUp:x.GateUp+span]) {
					t.Errorf("%s, %d device layers: layer %d's host block differs from its span of the arena", dir, k, i)
				}
				cut = append(cut, full[from:x.GateUp]...)
				from = x.GateUp + span
				hostBytes += span
			}
			cut = append(cut, full[from:]...)
			if l.HostBytes != hostBytes || l.Bytes != whole.Bytes-hostBytes || string(cut) != string(arena) {
				t.Errorf("%s, %d device layers: arena %d bytes (host %d), want the whole %d less %d with the same bytes",
					dir, k, l.Bytes, l.HostBytes, whole.Bytes, hostBytes)
			}
			for i := range l.Experts[:k] {
				if l.Experts[i].Host || l.Experts[i] != whole.Experts[i] {
					t.Errorf("%s, %d device layers: device layer %d's pack moved", dir, k, i)
				}
			}
		}
		if _, err := LayoutWeightsTier(ck.Weights, len(whole.Experts)+1); err == nil {
			t.Errorf("%s: more device layers than layers: no error", dir)
		}
		ck.Close()
	}
}

func f32At(b []byte, off int64) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
}

// layoutCheckpoints are the golden backbone checkpoints (per-expert FP8)
// and, where the base tokenizer is installed, two make-tiny ones: fused FP8
// experts whose gate and up share scale blocks (I = 160), and BF16 experts.
func layoutCheckpoints(t *testing.T) []string {
	dirs := []string{repoPath("engine/cpu/testdata/backbone/ckpt/like"), repoPath("engine/cpu/testdata/backbone/ckpt/odd")}
	if testing.Short() {
		return dirs
	}
	path, err := drama3.FindBaseTokenizer()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Log("no Qwen tokenizer.json: the make-tiny layouts are not checked (run make deps)")
		return dirs
	}
	base, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	fused := filepath.Join(root, "tiny-fp8-fused")
	if err := drama3.WriteTiny(fused, drama3.TinyOptions{Seed: 3, BaseTokenizer: base, FusedExperts: true}); err != nil {
		t.Fatal(err)
	}
	c := drama3.TinyConfig()
	c.Quant = drama3.QuantConfig{}
	bf16 := filepath.Join(root, "tiny-bf16")
	if err := drama3.WriteTiny(bf16, drama3.TinyOptions{Seed: 4, BaseTokenizer: base, Config: c}); err != nil {
		t.Fatal(err)
	}
	return append(dirs, fused, bf16)
}

func TestWeightLayoutPlacesEveryTensor(t *testing.T) {
	for _, dir := range layoutCheckpoints(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ck, err := drama3.Load(dir)
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

			// Experts: the packed matrices (dequantised as the kernels do:
			// scale block row r/128 of the matrix) equal the stored ones, the
			// padding is zero.
			fm, err := w.Float32Model()
			if err != nil {
				t.Fatal(err)
			}
			for li, x := range l.Experts {
				moe := &fm.Layers[li].MoE
				if x.FP8 != ck.Config.Quant.FP8() {
					t.Fatalf("layer %d: FP8 packing %v for quantization %q", li, x.FP8, ck.Config.Quant.Method)
				}
				sgu, sdn := (x.Hp+127)/128, (x.Ip+127)/128
				at := func(base, mat int64, s int64, count, scols, e, r, c, pitch int) float32 {
					if !x.FP8 {
						return checkpoint.BF16ToF32(binary.LittleEndian.Uint16(arena[base+int64(e)*mat+int64(r*pitch+c)*2:]))
					}
					q := arena[base+int64(e)*mat+int64(r*pitch+c)]
					return checkpoint.F8E4M3ToF32(q) * f32At(arena, s+int64(e*count+(r/128)*scols+c/128)*4)
				}
				for e := 0; e < x.Experts; e++ {
					xe := drama3.ExpertSlices(moe, e, &ck.Config.Text)
					for r := 0; r < 2*x.P; r++ {
						for c := 0; c < x.Hp; c++ {
							var want float32
							switch {
							case c >= x.H:
							case r < x.I:
								want = xe.Gate[r*x.H+c]
							case r >= x.P && r < x.P+x.I:
								want = xe.Up[(r-x.P)*x.H+c]
							}
							if got := at(x.GateUp, x.GateUpMatBytes, x.GateUpS, x.GateUpScaleCount, sgu, e, r, c, x.Hp); got != want {
								t.Fatalf("layer %d expert %d gate_up[%d][%d] = %v, want %v", li, e, r, c, got, want)
							}
						}
					}
					for r := 0; r < x.H; r++ {
						for c := 0; c < x.Ip; c++ {
							var want float32
							if c < x.I {
								want = xe.Down[r*x.I+c]
							}
							if got := at(x.Down, x.DownMatBytes, x.DownS, x.DownScaleCount, sdn, e, r, c, x.Ip); got != want {
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
	ck, err := drama3.Load(repoPath("engine/cpu/testdata/backbone/ckpt/odd"))
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

// repoPath finds a repository file from the package directory (go test) or
// from the repository root (a built test binary run there, as
// kernels/run-gpu-tests.sh does).
func repoPath(rel string) string {
	up := filepath.Join("..", "..", filepath.FromSlash(rel))
	if _, err := os.Stat(up); err == nil {
		return up
	}
	return filepath.FromSlash(rel)
}
