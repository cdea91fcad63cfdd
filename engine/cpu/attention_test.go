package cpu

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactRatio is float32(Σ num / Σ den) with both sums exact (big.Float)
// and one rounding: what the numerics contract's float64 sums give except
// where the exact value lies within float64 noise of a float32 boundary.
func exactRatio(num, den []float64) float32 {
	sum := func(v []float64) *big.Float {
		s := new(big.Float).SetPrec(2000)
		for _, x := range v {
			s.Add(s, new(big.Float).SetPrec(2000).SetFloat64(x))
		}
		return s
	}
	f, _ := new(big.Float).SetPrec(2000).Quo(sum(num), sum(den)).Float32()
	return f
}

// TestCausalAttentionSumsAnyOrder checks the softmax-weighted values of the
// last row against exact sums rounded once, and that permuting the cached
// rows (the order a split-K kernel may sum them in) changes no bit: a
// float32 running sum fails both.
func TestCausalAttentionSumsAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const rows, nh, nkv, hd = 1000, 2, 1, 64
	randv := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * s)
		}
		return v
	}
	q := randv(nh*hd, 1)
	kv := &kvCache{k: randv(rows*nkv*hd, 1), v: randv(rows*nkv*hd, 1)}
	got := make([]float32, nh*hd)
	causalAttention(got, q, nh*hd, hd, false, kv, 1, rows-1, nh, nkv, hd)

	differ := 0
	scale := float32(1 / math.Sqrt(hd))
	for h := 0; h < nh; h++ {
		qh := q[h*hd : (h+1)*hd]
		s := make([]float32, rows)
		m := float32(math.Inf(-1))
		for p := range s {
			s[p] = Dot(qh, kv.k[p*hd:(p+1)*hd]) * scale
			m = max(m, s[p])
		}
		den := make([]float64, rows)
		for p := range den {
			den[p] = float64(float32(math.Exp(float64(s[p] - m))))
		}
		for j := 0; j < hd; j++ {
			num := make([]float64, rows)
			for p := range num {
				num[p] = den[p] * float64(kv.v[p*hd+j])
			}
			if want := exactRatio(num, den); got[h*hd+j] != want {
				differ++
				if math.Abs(float64(got[h*hd+j]-want)) > float64(math.Nextafter32(want, float32(math.Inf(1)))-want)*1.01 {
					t.Errorf("head %d dim %d: %v, exact sums rounded once give %v", h, j, got[h*hd+j], want)
				}
			}
		}
	}
	if differ > 1 {
		t.Errorf("%d of %d outputs differ from exact sums rounded once", differ, nh*hd)
	}

	perm := r.Perm(rows)
	pk := &kvCache{k: make([]float32, len(kv.k)), v: make([]float32, len(kv.v))}
	for i, p := range perm {
		copy(pk.k[i*hd:(i+1)*hd], kv.k[p*hd:(p+1)*hd])
		copy(pk.v[i*hd:(i+1)*hd], kv.v[p*hd:(p+1)*hd])
	}
	again := make([]float32, nh*hd)
	causalAttention(again, q, nh*hd, hd, false, pk, 1, rows-1, nh, nkv, hd)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(again[i]) {
			t.Errorf("output %d: %v with the rows in order, %v permuted", i, got[i], again[i])
		}
	}
}
