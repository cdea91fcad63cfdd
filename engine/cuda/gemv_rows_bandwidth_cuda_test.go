//go:build cuda

package cuda

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

// TestGemvRowsBandwidth times the projections of B rows at the B-row step's
// and the tower's shapes under the device's policy (skipped unless PROSCENIUM_GEMVX_BANDWIDTH
// is set): every gemvx instance, the prefill's GEMM of B rows (GemmBF16, the
// tensor-core instance ChooseGemm picks) and B one-row GEMVs (ChooseGemv's
// instance, each reading the matrix again). Each figure is the median of
// graph replays of a chain of launches over enough copies of the matrix that
// L2 cannot serve a repeated read; GB/s counts the matrix's bytes once per
// launch (the B rows' inputs and outputs are a few KiB). The lines "gemvx
// SHAPE B=…" are what ChooseGemvRows is picked from (docs/PERF.md).
func TestGemvRowsBandwidth(t *testing.T) {
	if os.Getenv("PROSCENIUM_GEMVX_BANDWIDTH") == "" {
		t.Skip("set PROSCENIUM_GEMVX_BANDWIDTH=1 to time the several-row projections")
	}
	const batches, perBatch = 7, 16
	shapes := []struct {
		name       string
		rows, cols int
	}{
		{"deltanet in 2048→12352", 12352, 2048},
		{"attention qkv 2048→9216", 9216, 2048},
		{"out 4096→2048", 2048, 4096},
		{"router+shared 2048→1281", 1281, 2048},
		{"shared down 512→2048", 2048, 512},
		{"tower w2 6144→2048", 2048, 6144},
		{"tower qkv 2048→2560", 2560, 2048},
		{"tower wo 2048→2048", 2048, 2048},
		{"semantic head 2048→4097", 4097, 2048},
		{"codebook head 2048→1024", 1024, 2048},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range shapes {
		mat := int64(s.rows) * int64(s.cols) * 2
		copies := int(max(2, (256<<20)/mat+1))
		W := allocNoCleanup(t, int(mat)*copies)
		if err := dev.Fill32(W, 0x3c003c00); err != nil { // BF16 pairs of 0.0078
			t.Fatal(err)
		}
		x := upload(t, randNonZero(r, MaxStepRows*s.cols))
		y := alloc(t, MaxStepRows*s.rows*4)
		w := func(i int) *Block {
			return &Block{Kind: DeviceMem, Ptr: W.Ptr + uintptr(int64(i%copies)*mat), Bytes: mat}
		}
		report := func(what string, b int, ms float64) {
			t.Logf("gemvx %s B=%d %s: %.2f µs, %.0f GB/s", s.name, b, what, ms*1e3, float64(mat)/(ms*1e6))
		}
		for _, b := range []int{1, 2, 4, 8} {
			i := 0
			one := q1Gemv(s.rows, s.cols)
			ms := medianGraph(t, batches, perBatch, func(q *Queue) error {
				for k := 0; k < b; k++ {
					xb := &Block{Kind: DeviceMem, Ptr: x.Ptr + uintptr(k*s.cols*4), Bytes: int64(s.cols * 4)}
					yb := &Block{Kind: DeviceMem, Ptr: y.Ptr + uintptr(k*s.rows*4), Bytes: int64(s.rows * 4)}
					if err := q.GemvBF16(q.backboneGemv(one, false, siteOther), yb, w(i), xb); err != nil {
						return err
					}
				}
				i++
				return nil
			}, nil)
			report(fmt.Sprintf("%d one-row GEMVs", b), b, ms)
			if b == 1 {
				continue
			}
			variants := GemvRowsVariants
			if !dev.Numerics.Exact() {
				variants = append(variants[:len(variants):len(variants)], GemvRowsMMA)
			}
			for _, v := range variants {
				g := GemvRows{Rows: s.rows, Cols: s.cols, NB: b, Variant: v, F64: dev.Numerics.Exact()}
				ms := medianGraph(t, batches, perBatch, func(q *Queue) error {
					i++
					return q.GemvRowsBF16(g, y, w(i), x)
				}, nil)
				report("gemvx "+gemvRowsName(v), b, ms)
			}
			ms = medianGraph(t, batches, perBatch, func(q *Queue) error {
				i++
				return q.GemmBF16(Gemm{N: b, Rows: s.rows, Cols: s.cols}, Whole(y), Whole(w(i)), Whole(x))
			}, nil)
			report("GEMM", b, ms)
		}
		if err := dev.Free(W); err != nil {
			t.Fatal(err)
		}
	}
}

// q1Gemv is a one-row projection of one [rows, cols] matrix (the variant is
// chosen at launch, backboneGemv).
func q1Gemv(rows, cols int) Gemv { return Gemv{Rows: rows, Cols: cols, N: 1, Mats: 1} }
