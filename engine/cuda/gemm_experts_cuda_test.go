//go:build cuda

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
)

// TestGemmGroupedExperts runs the prefill's routed experts at the full
// geometry as the backbone calls them (top 8 of 256 experts for 60 and 300
// tokens; every expert a group, sorted by expert, empty ones included):
// gate·up 2048 → 1024 reading the token rows through row ids, down 512 →
// 2048 reading one row per (token, expert) pair, FP8 with random block
// scales. Every tensor-core instance and exact numerics' pick against
// cpu.MatVec of each pair (tensor-core ones within checkGemm's tolerance,
// the FP64 one to the CPU's bits); gemm32's wide instances among them.
func TestGemmGroupedExperts(t *testing.T) {
	r := newRand(t)
	const E, K = 256, 8
	for _, shape := range []struct {
		name       string
		rows, cols int
		perPair    bool // X holds one row per pair (no row ids)
	}{
		{"gate·up 2048→1024", 1024, 2048, false},
		{"down 512→2048", 2048, 512, true},
	} {
		W, S, wf := fullExpertWeights(t, r, E, shape.rows, shape.cols)
		for _, n := range []int{60, 300} {
			t.Run(fmt.Sprintf("%s %d tokens", shape.name, n), func(t *testing.T) {
				byExpert := make([][]int32, E)
				for tok := 0; tok < n; tok++ {
					for _, e := range distinctIDs(r, K, E) {
						byExpert[e] = append(byExpert[e], int32(tok))
					}
				}
				offsets := []int32{0}
				var rowIDs []int32
				for e := 0; e < E; e++ {
					rowIDs = append(rowIDs, byExpert[e]...)
					offsets = append(offsets, int32(len(rowIDs)))
				}
				nk := len(rowIDs)
				xrows := n
				if shape.perPair {
					xrows = nk
				}
				x := randNonZero(r, xrows*shape.cols)
				g := Gemm{N: nk, Rows: shape.rows, Cols: shape.cols, Groups: E, Mats: E, MaxGroupRows: n,
					Offsets: Whole(upload(t, offsets))}
				if !shape.perPair {
					g.RowIds, g.XRows = Whole(upload(t, rowIDs)), n
				}
				ref := make([]float32, nk*shape.rows)
				for e := 0; e < E; e++ {
					if offsets[e] == offsets[e+1] {
						continue
					}
					w := wf(e)
					for i := int(offsets[e]); i < int(offsets[e+1]); i++ {
						src := i
						if !shape.perPair {
							src = int(rowIDs[i])
						}
						cpu.MatVec(ref[i*shape.rows:(i+1)*shape.rows], w, x[src*shape.cols:(src+1)*shape.cols], shape.rows, shape.cols)
					}
				}
				xb := upload(t, x)
				exact := ChooseGemm(g.grid(gemmBM)[0]*E, shape.rows)
				t.Logf("%d pairs, %.1f an expert; fast numerics pick %s, exact %s", nk, float64(nk)/E, ChooseGemmFast(nk, shape.rows, E), exact)
				kernels := []string{exact}
				for _, s := range gemmMmaShapes {
					kernels = append(kernels, s.name())
				}
				kernels = append(gemmKernelsNamed(kernels), gemmWideKernels(t)...) // gemm32's wide ones too
				kernels = append(kernels, gemmF16Kernels(t)...)                    // and f16p34's FP16 parts
				for _, k := range kernels {
					g.Kernel = k
					y := poisoned(t, nk*shape.rows)
					if err := dev.Run(func(q *Queue) error { return q.GemmFP8(g, Whole(y), Whole(W), Whole(S), Whole(xb)) }); err != nil {
						t.Fatal(err)
					}
					checkGemm(t, "experts", k, download(t, y, nk*shape.rows), ref)
				}
			})
		}
	}
}

// fullExpertWeights is expertWeights (FP8) for full-size experts: every
// byte a random E4M3 code, zeros included, the NaN codes made 0x7e, eight
// bytes a draw (768 MB of experts by the byte would take seconds).
func fullExpertWeights(t *testing.T, r *rand.Rand, mats, rows, cols int) (W, S *Block, wf func(m int) []float32) {
	t.Helper()
	per := rows * cols
	wq := make([]uint8, mats*per)
	for i := 0; i < len(wq); i += 8 {
		binary.LittleEndian.PutUint64(wq[i:], r.Uint64())
	}
	for i, b := range wq {
		if b&0x7f == 0x7f {
			wq[i] = b ^ 1
		}
	}
	ns := FP8ScaleCount(rows, cols)
	scales := make([]float32, mats*ns)
	for i := range scales {
		scales[i] = float32(1e-3 * (1 + 9*r.Float64()))
	}
	return upload(t, wq), upload(t, scales), func(m int) []float32 {
		return checkpoint.DequantFP8Blocks(wq[m*per:(m+1)*per], rows, cols, scales[m*ns:(m+1)*ns], FP8Block)
	}
}

// TestGemmFP8Codes: every finite E4M3 code, subnormals and both zeros
// included, reaches the products as its value. Row c of W holds code c in
// every column (two 128-row scale blocks, two column blocks), X is
// positive, so each output is one code's value times a sum without
// cancellation and is checked on its own within 1e-4 (a code read as zero,
// or one mantissa step off, is ≥ 6 % off; a norm over all rows would hide
// the small codes). Every GEMM instance (gemm32's wide ones too), dense
// and as one group.
func TestGemmFP8Codes(t *testing.T) {
	r := newRand(t)
	var codes []uint8
	for c := 0; c < 256; c++ {
		if c&0x7f != 0x7f { // the two NaN codes
			codes = append(codes, uint8(c))
		}
	}
	rows, cols, n := len(codes), 256, 24
	wq := make([]uint8, rows*cols)
	for i, c := range codes {
		for k := 0; k < cols; k++ {
			wq[i*cols+k] = c
		}
	}
	scales := make([]float32, FP8ScaleCount(rows, cols))
	for i := range scales {
		scales[i] = float32(1e-3 * (1 + 9*r.Float64()))
	}
	wf := checkpoint.DequantFP8Blocks(wq, rows, cols, scales, FP8Block)
	x := make([]float32, n*cols)
	for i := range x {
		x[i] = float32(0.5 + r.Float64())
	}
	ref := make([]float32, n*rows)
	for i := 0; i < n; i++ {
		cpu.MatVec(ref[i*rows:(i+1)*rows], wf, x[i*cols:(i+1)*cols], rows, cols)
	}
	W, S, xb := upload(t, wq), upload(t, scales), upload(t, x)
	offsets := Whole(upload(t, []int32{0, int32(n)}))
	for _, k := range append(append(gemmKernels, gemmWideKernels(t)...), gemmF16Kernels(t)...) { // gemm32's wide instances and f16p34's too
		for _, grouped := range []bool{false, true} {
			g := Gemm{N: n, Rows: rows, Cols: cols, Kernel: k}
			if grouped {
				g.Groups, g.Offsets, g.Mats, g.MaxGroupRows = 1, offsets, 1, n
			}
			y := poisoned(t, n*rows)
			if err := dev.Run(func(q *Queue) error { return q.GemmFP8(g, Whole(y), Whole(W), Whole(S), Whole(xb)) }); err != nil {
				t.Fatal(err)
			}
			got := download(t, y, n*rows)
			worst := 0.0
			for i := range ref {
				d := math.Abs(float64(got[i]) - float64(ref[i]))
				if ref[i] == 0 && got[i] != 0 || d > 1e-4*math.Abs(float64(ref[i])) {
					c := codes[i%rows]
					t.Fatalf("%s grouped %v: code %#02x (%g) row %d: got %g, want %g", k, grouped, c, checkpoint.DequantFP8Blocks([]uint8{c}, 1, 1, []float32{1}, FP8Block)[0], i/rows, got[i], ref[i])
				}
				if ref[i] != 0 {
					worst = max(worst, d/math.Abs(float64(ref[i])))
				}
			}
			t.Logf("%s grouped %v: worst relative error %.3g over %d codes", k, grouped, worst, rows)
		}
	}
}
