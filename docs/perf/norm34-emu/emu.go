//go:build ignore

// norm34's host check of the cluster norm tails without a GPU (docs/PERF.md
// "norm34"): kernels/row_norm.cuh's ClusterSpan with row_value_rmsnorm_zc
// (COLS = 1, as add_rmsnorm_zc_cluster_fast and moe_combine_norm_cluster_fast
// instance it) repeated lane by lane in float32: block rank r of the 8 holds
// columns [r·cb, min(H, (r+1)·cb)), cb = ⌈H/8⌉, thread t column c0 + t and
// then c0 + t + 256·i; each thread's sum of squares (an FMA a column), the
// warp's butterfly (xor 16 … 1), each warp's sum pushed to slot [rank][warp]
// of every block, the slots added by cluster_tree_sum's order (float4s as
// (x + y) + (z + w), then s[i] += s[i + 8], + 4, + 2, s0 + s1); rsqrtf(ss/H
// + eps) at its error bound (2 ulp, both ways); (x·inv)·(1 + w); padding
// H + rank·256 + t, step 2048. Against cpu.RMSNormZeroCentred (float64 sum,
// one rounding) on random rows of Drama 3's width and odd ones; every column
// and padding value must be written exactly once, and the relative error
// ‖got − ref‖/‖ref‖ ≤ 1e-6 (the device tests' tolerance). A deliberately
// broken split (the last column of each rank's share left to nobody) and a
// lost push (rank 7's slots never arrive) must fail.
//
// Usage, from the repository root: go run docs/perf/norm34-emu/emu.go
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"proscenium/engine/cpu"
)

const (
	cluster = 8   // NORM_CLUSTER
	threads = 256 // NORM_CLUSTER_THREADS
	warps   = threads / 32
)

type breakage int

const (
	none breakage = iota
	splitOffByOne
	lostPush
)

func f32(x float64) float32 { return float32(x) }

// fma32 is a float32 fused multiply-add (exact product in float64, one
// rounding to float32 but for the float64 sum's own rounding: close enough
// for a reduction-order check).
func fma32(a, b, c float32) float32 { return f32(math.FMA(float64(a), float64(b), float64(c))) }

// clusterRow runs one row: x [H] (the values, as value(c) makes them), w
// [H], into o [npitch]; writes counts each column's writes.
func clusterRow(x, w []float32, o []float32, writes []int, H, npitch int, eps float32, rsqrtBias float64, br breakage) {
	cb := (H + cluster - 1) / cluster
	var part [cluster][cluster * warps]float32 // each block's copy of the pushed slots
	type thr struct {
		ss float32
		cs []int
	}
	blocks := make([][threads]thr, cluster)
	for r := 0; r < cluster; r++ {
		c0 := min(H, r*cb)
		ce := min(H, c0+cb)
		if br == splitOffByOne {
			ce = max(c0, ce-1)
		}
		for t := 0; t < threads; t++ {
			th := &blocks[r][t]
			for c := c0 + t; c < ce; c += threads {
				th.ss = fma32(x[c], x[c], th.ss)
				th.cs = append(th.cs, c)
			}
		}
		for wp := 0; wp < warps; wp++ {
			var lane [32]float32
			for l := range lane {
				lane[l] = blocks[r][wp*32+l].ss
			}
			for off := 16; off > 0; off >>= 1 {
				var nx [32]float32
				for l := range lane {
					nx[l] = lane[l] + lane[l^off]
				}
				lane = nx
			}
			for l := 0; l < cluster; l++ { // lane l pushes into rank l
				if br == lostPush && r == cluster-1 {
					continue
				}
				part[l][r*warps+wp] = lane[l]
			}
		}
	}
	for r := 0; r < cluster; r++ {
		p := part[r]
		var s [16]float32
		for i := range s {
			s[i] = (p[4*i] + p[4*i+1]) + (p[4*i+2] + p[4*i+3])
		}
		for i := 0; i < 8; i++ {
			s[i] += s[i+8]
		}
		for i := 0; i < 4; i++ {
			s[i] += s[i+4]
		}
		for i := 0; i < 2; i++ {
			s[i] += s[i+2]
		}
		tot := s[0] + s[1]
		inv := f32(1 / math.Sqrt(float64(tot/float32(H)+eps)) * (1 + rsqrtBias))
		for t := 0; t < threads; t++ {
			for _, c := range blocks[r][t].cs {
				o[c] = x[c] * inv * (1 + w[c])
				writes[c]++
			}
			for c := H + r*threads + t; c < npitch; c += cluster * threads {
				o[c] = 0
				writes[c]++
			}
		}
	}
}

func run(br breakage, verbose bool) (worst float64, ok bool) {
	rng := rand.New(rand.NewPCG(34, 2026))
	ok = true
	for _, g := range []struct{ H, npitch int }{{2048, 2048}, {2048, 2176}, {4096, 4096}, {136, 144}, {100, 112}, {7, 16}, {2047, 2048}} {
		for _, bias := range []float64{-2.4e-7, 0, 2.4e-7} {
			for rep := 0; rep < 20; rep++ {
				x, w := make([]float32, g.H), make([]float32, g.H)
				scale := math.Pow(10, float64(rng.IntN(7)-3)) // rows from 1e-3 to 1e3
				for i := range x {
					x[i] = f32(rng.NormFloat64() * scale)
					w[i] = f32(rng.NormFloat64() * 0.1)
				}
				o := make([]float32, g.npitch)
				for i := range o {
					o[i] = float32(math.NaN())
				}
				writes := make([]int, g.npitch)
				clusterRow(x, w, o, writes, g.H, g.npitch, 1e-6, bias, br)
				ref := make([]float32, g.npitch)
				cpu.RMSNormZeroCentred(ref[:g.H], x, w, 1e-6)
				var num, den float64
				for c := range o {
					if writes[c] != 1 {
						if verbose {
							fmt.Printf("H=%d pitch=%d: column %d written %d times\n", g.H, g.npitch, c, writes[c])
						}
						ok = false
						break
					}
					d := float64(o[c]) - float64(ref[c])
					num += d * d
					den += float64(ref[c]) * float64(ref[c])
				}
				rel := math.Sqrt(num / den)
				if !(rel <= 1e-6) {
					ok = false
				}
				if rel > worst || math.IsNaN(rel) {
					worst = rel
				}
			}
		}
		if verbose {
			fmt.Printf("H=%-5d pitch=%-5d 60 rows: worst relative error so far %.3g\n", g.H, g.npitch, worst)
		}
	}
	return worst, ok
}

func main() {
	worst, ok := run(none, true)
	fmt.Printf("cluster split and reduction order: worst relative error %.3g against cpu.RMSNormZeroCentred (≤ 1e-6): %v\n", worst, ok)
	_, okSplit := run(splitOffByOne, false)
	_, okPush := run(lostPush, false)
	fmt.Printf("broken on purpose: split off by one caught %v, lost push caught %v\n", !okSplit, !okPush)
	if !ok || okSplit || okPush {
		os.Exit(1)
	}
}
