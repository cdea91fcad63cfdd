// Package cpu is the pure-Go float32 reference backend: the backbone, the
// codebook tower, the codec decoder and the primitive operations they are
// built from. It is the definition of correct that every CUDA kernel is
// compared with, and the backend CI runs. It reads weights through
// engine/drama3 and engine/checkpoint and never touches a GPU.
package cpu

import (
	"math"
	"runtime"
	"sync"
)

// This file holds the primitive operations shared by the backbone, the tower
// and the CUDA kernels' device tests (each kernel's Go reference is one of
// these). Every one is plain float32 arithmetic, written for clarity first.

// MatVec computes dst[r] = Σ_c w[r·cols+c]·x[c] for a row-major [rows, cols]
// matrix, splitting rows over goroutines when the matrix is large.
func MatVec(dst, w, x []float32, rows, cols int) {
	_ = w[rows*cols-1]
	_ = x[cols-1]
	parallelFor(rows, rows*cols, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			dst[r] = Dot(w[r*cols:(r+1)*cols], x)
		}
	})
}

// MatMulRows applies MatVec to each of n input rows: dst[i] = W·x[i]. x is
// [n, cols], dst is [n, rows].
func MatMulRows(dst, w, x []float32, n, rows, cols int) {
	parallelFor(n*rows, n*rows*cols, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			i, r := k/rows, k%rows
			dst[k] = Dot(w[r*cols:(r+1)*cols], x[i*cols:(i+1)*cols])
		}
	})
}

// Dot is the dot product of two equal-length vectors, rounded to float32
// once: every product is exact in float64 (24-bit by 24-bit significands)
// and the products are summed in float64, so the result is the float32
// nearest the exact sum unless that sum lies within float64 rounding noise
// (about n·2⁻⁵³ of Σ|a·b|) of a float32 rounding boundary. The order of the
// sum is therefore not part of the definition: a GPU kernel that sums the
// same float64 products in any order rounds to the same float32 (the
// backbone's numerics contract, docs/MODEL.md "Numerics").
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float64(a[i]) * float64(b[i])
		s1 += float64(a[i+1]) * float64(b[i+1])
		s2 += float64(a[i+2]) * float64(b[i+2])
		s3 += float64(a[i+3]) * float64(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i]) * float64(b[i])
	}
	return float32((s0 + s1) + (s2 + s3))
}

// RMSNormZeroCentred is the decoder norm of Qwen3.5: y = x / rms(x) · (1 + w),
// with rms(x) = sqrt(mean(x²) + eps). The inverse rms is formed in float64
// from the float64 sum of squares and rounded once (invRMS); then each output
// is (x·inv)·(1 + w), float32 operations in that order (no add follows a
// product, so nothing can fuse). dst may alias x.
func RMSNormZeroCentred(dst, x, w []float32, eps float32) {
	inv := invRMS(x, eps)
	for i, v := range x {
		dst[i] = v * inv * (1 + w[i])
	}
}

// RMSNorm is the plain-gain norm: y = x / rms(x) · w. dst may alias x.
func RMSNorm(dst, x, w []float32, eps float32) {
	inv := invRMS(x, eps)
	for i, v := range x {
		dst[i] = v * inv * w[i]
	}
}

func invRMS(x []float32, eps float32) float32 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
}

// SiLU is x·sigmoid(x), computed as x / (1 + float32(exp(−x))): the
// exponential in float64 rounded once, then a float32 add and division.
func SiLU(x float32) float32 { return x / (1 + float32(math.Exp(float64(-x)))) }

// Sigmoid is 1/(1+e^-x), its exponential in float64 rounded once, the add
// and the division in float32.
func Sigmoid(x float32) float32 { return 1 / (1 + float32(math.Exp(float64(-x)))) }

// SwiGLU computes dst[i] = silu(gate[i])·up[i]. dst may alias gate or up.
func SwiGLU(dst, gate, up []float32) {
	for i := range dst {
		dst[i] = SiLU(gate[i]) * up[i]
	}
}

// Add computes dst[i] += x[i] (the residual add).
func Add(dst, x []float32) {
	for i := range dst {
		dst[i] += x[i]
	}
}

// AddScaled computes dst[i] += s·x[i], the product rounded to float32
// before the add (never fused: the numerics contract's rule 4).
func AddScaled(dst, x []float32, s float32) {
	for i := range dst {
		dst[i] += float32(s * x[i])
	}
}

// GatherRows copies rows ids[i] of the [*, width] table into dst[i].
func GatherRows(dst, table []float32, ids []int, width int) {
	for i, id := range ids {
		copy(dst[i*width:(i+1)*width], table[id*width:(id+1)*width])
	}
}

// minParallelWork is the number of multiply-adds below which a loop runs on
// the calling goroutine: spawning costs more than it saves.
const minParallelWork = 1 << 15

// parallelFor splits [0, n) into contiguous ranges over GOMAXPROCS goroutines
// when work (an estimate of the inner operations) is large enough.
func parallelFor(n, work int, body func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > n {
		workers = n
	}
	if work < minParallelWork || workers <= 1 {
		body(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(lo, hi)
		}()
	}
	wg.Wait()
}
