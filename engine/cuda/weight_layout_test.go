package cuda

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
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
// also fills each host layer's block, and the host block of dense tensors
// (at hostDenseBlock).
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
	if l.HostDenseBytes > 0 {
		host[hostDenseBlock] = make([]byte, l.HostDenseBytes)
		written[hostDenseBlock] = make([]bool, l.HostDenseBytes)
	}
	fill := newArenaFiller(l, func(hostLayer int, dst int64, src []byte) error {
		to, w := arena, written[-1]
		if hostLayer >= 0 || hostLayer == hostDenseBlock {
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

// TestWeightLayoutTier: with the experts of the last layers in host memory
// (and, with hostDense, the token embedding and an untied LM head), the
// arena is the whole layout's with those spans cut out, and each host block
// holds its spans, byte for byte. Broken once by leaving the LM head in
// the arena under hostDense: SparseBytes then disagreed with the cut.
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
		if whole.SparseBytes <= 0 || whole.HostBytes != 0 || whole.HostDenseBytes != 0 {
			t.Fatalf("%s: whole layout: sparse %d, host %d + %d bytes", dir, whole.SparseBytes, whole.HostBytes, whole.HostDenseBytes)
		}
		full := hostArena(t, ck, whole)
		for _, k := range []int{0, len(whole.Experts) / 2, len(whole.Experts)} {
			for _, hostDense := range []bool{false, true} {
				checkLayoutTier(t, ck, whole, full, k, hostDense)
			}
		}
		if _, err := LayoutWeightsTier(ck.Weights, len(whole.Experts)+1, false); err == nil {
			t.Errorf("%s: more device layers than layers: no error", dir)
		}
		ck.Close()
	}
}

// checkLayoutTier is TestWeightLayoutTier for k device layers.
func checkLayoutTier(t *testing.T, ck *drama3.Checkpoint, whole *WeightLayout, full []byte, k int, hostDense bool) {
	t.Helper()
	name := fmt.Sprintf("%s, %d device layers, dense in host memory %v", ck.Dir, k, hostDense)
	l, err := LayoutWeightsTier(ck.Weights, k, hostDense)
	if err != nil {
		t.Fatal(err)
	}
	arena, host := hostArenaTier(t, ck, l)
	// cuts are the whole arena's ranges that moved to a host block.
	type cut struct {
		from, n int64
		block   int
		at      int64 // offset in the block
	}
	var cuts []cut
	for i, x := range whole.Experts[k:] {
		i += k
		span := x.SpanBytes()
		if !l.Experts[i].Host || l.Experts[i].GateUp != 0 || l.Experts[i].SpanBytes() != span {
			t.Fatalf("%s: layer %d's pack %+v", name, i, l.Experts[i])
		}
		cuts = append(cuts, cut{from: x.GateUp, n: span, block: i})
	}
	for _, p := range []*drama3.Param{ck.Weights.Embed, ck.Weights.LMHead} {
		if dt, ok := l.Tensors[p]; p != nil && (!ok || dt.Host != hostDense) {
			t.Errorf("%s: %s placed %+v", name, p.Name, dt)
		}
	}
	var sparse int64
	for p, dt := range l.Tensors {
		w := whole.Tensors[p]
		if !dt.Host {
			continue
		}
		n := (dt.Bytes() + arenaAlign - 1) / arenaAlign * arenaAlign
		cuts = append(cuts, cut{from: w.Off, n: n, block: hostDenseBlock, at: dt.Off})
		sparse += n
	}
	if want := map[bool]int64{false: 0, true: whole.SparseBytes}[hostDense]; sparse != want || l.HostDenseBytes != want {
		t.Errorf("%s: %d bytes of dense tensors in host memory (block of %d), want %d", name, sparse, l.HostDenseBytes, want)
	}
	slices.SortFunc(cuts, func(a, b cut) int { return cmp.Compare(a.from, b.from) })
	var kept []byte
	var hostBytes, from int64
	for _, c := range cuts {
		if string(host[c.block][c.at:c.at+c.n]) != string(full[c.from:c.from+c.n]) {
			t.Errorf("%s: host block %d at %d differs from the arena's bytes at %d", name, c.block, c.at, c.from)
		}
		kept = append(kept, full[from:c.from]...)
		from = c.from + c.n
		hostBytes += c.n
	}
	kept = append(kept, full[from:]...)
	if l.HostBytes != hostBytes || l.Bytes != whole.Bytes-hostBytes || string(kept) != string(arena) {
		t.Errorf("%s: arena %d bytes (host %d), want the whole %d less %d with the same bytes",
			name, l.Bytes, l.HostBytes, whole.Bytes, hostBytes)
	}
	for i := range l.Experts[:k] {
		// A device layer's pack is the whole's, less the bytes cut before it.
		want := whole.Experts[i]
		var shift int64
		for _, c := range cuts {
			if c.from < want.GateUp {
				shift += c.n
			}
		}
		want.GateUp, want.Down = want.GateUp-shift, want.Down-shift
		if want.FP8 {
			want.GateUpS, want.DownS = want.GateUpS-shift, want.DownS-shift
		}
		if l.Experts[i].Host || l.Experts[i] != want {
			t.Errorf("%s: device layer %d's pack %+v, want %+v", name, i, l.Experts[i], want)
		}
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
