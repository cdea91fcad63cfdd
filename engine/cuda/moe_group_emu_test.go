package cuda

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"proscenium/engine/cuda/kernel"
)

// The grouping of a prefill's (row, expert) pairs by expert (kernels/moe.cu
// moe_group, moe_group_warps): its definition, a host emulation of
// moe_group_warps lane by lane, and the inputs both it and the device test
// (TestMoEGroup) take.

// moeGroupRef is the definition: a stable sort of the pairs by expert.
// offsets [E+1] bound each expert's sorted positions, slot[p] is pair p's
// sorted position and rowids[s] the row (pair / k) of sorted position s.
func moeGroupRef(ids []int32, k, E int) (offsets, rowids, slot []int32) {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ids[order[a]] < ids[order[b]] })
	rowids, slot = make([]int32, len(ids)), make([]int32, len(ids))
	for s, p := range order {
		slot[p], rowids[s] = int32(s), int32(p/k)
	}
	offsets = make([]int32, E+1)
	for _, e := range ids {
		offsets[e+1]++
	}
	for e := 0; e < E; e++ {
		offsets[e+1] += offsets[e]
	}
	return offsets, rowids, slot
}

// moeGroupWarpsEmu runs moe_group_warps's integer work on the host as the
// kernel does it: shared memory as arrays of the kernel's sizes and types
// (uninitialised words poisoned; an index past them panics), each warp's
// 32-pair steps with __match_any_sync's peer masks, every lane's read of its
// expert's count before any lane's write, the 16-bit stores, the two-level
// shuffle scan of the columns' sums, and the final pass's arithmetic.
func moeGroupWarpsEmu(ids []int32, k, E int) (offsets, rowids, slot []int32) {
	const threads, warps = kernel.MoEGroupThreads, kernel.MoEGroupThreads / 32
	pairs := len(ids)
	var cnt [kernel.MoEGroupCounts]uint16
	var pk [kernel.MoEGroupMaxPairs]int32
	var wsum [warps]int32
	for i := range cnt {
		cnt[i] = 0xbeef
	}
	for i := range pk {
		pk[i] = -0x7007
	}
	W := min(warps, kernel.MoEGroupCounts/max(E, 1))
	C := ((pairs+W-1)/W + 31) &^ 31
	for i := 0; i < W*E; i++ {
		cnt[i] = 0
	}
	copy(pk[:], ids)
	for w := 0; w < W; w++ {
		c := cnt[w*E:]
		p1 := min(w*C+C, pairs)
		for p0 := w * C; p0 < p1; p0 += 32 {
			var e, base, rank, group [32]int
			var ok [32]bool
			for l := range 32 {
				p := p0 + l
				ok[l] = p < p1
				e[l] = -1 - l
				if ok[l] {
					e[l] = int(pk[p])
				}
			}
			for l := range 32 {
				var peers uint32
				for m := range 32 {
					if e[m] == e[l] {
						peers |= 1 << m
					}
				}
				rank[l], group[l] = bits.OnesCount32(peers&(1<<l-1)), bits.OnesCount32(peers)
				if ok[l] {
					base[l] = int(c[e[l]])
				}
			}
			for l := range 32 {
				if ok[l] {
					pk[p0+l] = int32((base[l]+rank[l])<<16 | e[l])
					if rank[l] == group[l]-1 {
						c[e[l]] = uint16(base[l] + group[l])
					}
				}
			}
		}
	}
	// Thread t = expert e: the column's sum, then the shuffle scans.
	var tot, incl [threads]int32
	for e := 0; e < E; e++ {
		for w := 0; w < W; w++ {
			tot[e] += int32(cnt[w*E+e])
		}
	}
	scan := func(v []int32) { // __shfl_up_sync steps over one warp's 32 lanes, all at once
		for d := 1; d < 32; d <<= 1 {
			prev := slices.Clone(v)
			for l := d; l < 32; l++ {
				v[l] += prev[l-d]
			}
		}
	}
	copy(incl[:], tot[:])
	for w := range warps {
		scan(incl[w*32 : w*32+32])
		wsum[w] = incl[w*32+31]
	}
	s := wsum
	scan(s[:])
	for l := range warps {
		wsum[l] = s[l] - wsum[l]
	}
	offsets = make([]int32, E+1)
	for e := range offsets {
		offsets[e] = -1 // poisoned: the kernel writes every one
	}
	for e := 0; e < E; e++ {
		run := wsum[e/32] + incl[e] - tot[e]
		offsets[e] = run
		if e == E-1 {
			offsets[E] = run + tot[e]
		}
		for w := 0; w < W; w++ {
			c := int32(cnt[w*E+e])
			cnt[w*E+e] = uint16(run)
			run += c
		}
	}
	rowids, slot = make([]int32, pairs), make([]int32, pairs)
	for i := range rowids {
		rowids[i], slot[i] = -1, -1
	}
	for p := 0; p < pairs; p++ {
		v := pk[p]
		s := int32(cnt[(p/C)*E+int(v&0xffff)]) + v>>16
		slot[p] = s
		rowids[s] = int32(p / k)
	}
	return offsets, rowids, slot
}

// moeGroupCase is one input of the grouping: pairs ids below E, k a row.
type moeGroupCase struct {
	name string
	k, E int
	ids  []int32
}

// moeGroupCases are the inputs of the grouping's tests: prefill-like
// routings (k distinct experts a row) over 256 and 1024 experts from 1 to
// 2048 rows (16 384 pairs, MOE_GROUP_MAX_PAIRS: pass13's longest pass), and
// adversarial ones: every pair one expert (the first, the
// last), every expert once (in order, reversed, shuffled), experts in
// descending order, a few hot experts, runs of one expert that straddle the
// warps' 32-pair steps and ranges, and expert counts around the kernel's
// warp rule (384 and 385 experts: 32 warps and 31). With many false, a
// sample of them (the device test's).
func moeGroupCases(r *rand.Rand, many bool) []moeGroupCase {
	var cs []moeGroupCase
	add := func(name string, k, E int, ids []int32) {
		cs = append(cs, moeGroupCase{fmt.Sprintf("%s_%dpairs_top%d_of%d", name, len(ids), k, E), k, E, ids})
	}
	routed := func(rows, k, E int) []int32 {
		ids := make([]int32, 0, rows*k)
		for range rows {
			p := r.Perm(E)[:k]
			for _, v := range p {
				ids = append(ids, int32(v))
			}
		}
		return ids
	}
	gen := func(n int, f func(i int) int) []int32 {
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32(f(i))
		}
		return ids
	}
	rows := []int{1, 2, 3, 4, 5, 7, 8, 60, 64, 100, 300, 301, 383, 384, 500, 511, 512, 700, 746, 1023, 1024, 1500, 2047, 2048}
	if !many {
		rows = []int{1, 4, 60, 300, 512, 746, 2048}
	}
	for _, E := range []int{256, 1024} {
		for _, n := range rows {
			add("routed", 8, E, routed(n, 8, E))
		}
	}
	add("routed", 8, 256, routed(60, 8, 256)[:479]) // pairs not a multiple of k
	add("routed", 10, 512, routed(300, 10, 512))
	add("routed", 3, 6, routed(5, 3, 6))
	add("routed", 10, 1024, routed(400, 10, 1024))
	sizes := []int{1, 2, 31, 32, 33, 63, 64, 65, 480, 1023, 1024, 1025, 2400, 4095, 4096, 4097, 6144, 8191, 8192, 8193, 12000, 16383, 16384}
	if !many {
		sizes = []int{1, 33, 2400, 4096, 8192, 16384}
	}
	for _, E := range []int{256, 1024} {
		for _, n := range sizes {
			add("first", 8, E, gen(n, func(int) int { return 0 }))
			add("last", 8, E, gen(n, func(int) int { return E - 1 }))
			add("descending", 8, E, gen(n, func(i int) int { return E - 1 - i*E/n }))
			add("hot3", 8, E, gen(n, func(int) int { return []int{5, 6, E - 2}[r.IntN(3)] }))
			add("runs", 8, E, gen(n, func(i int) int { return (i / 37) % E }))
			add("uniform", 8, E, gen(n, func(int) int { return r.IntN(E) }))
		}
		add("once", 8, E, gen(E, func(i int) int { return i }))
		add("once-reversed", 8, E, gen(E, func(i int) int { return E - 1 - i }))
		perm := r.Perm(E)
		add("once-shuffled", 8, E, gen(E, func(i int) int { return perm[i] }))
	}
	for _, E := range []int{1, 6, 384, 385, 512, 1000} {
		for _, n := range []int{1, 100, 4096, kernel.MoEGroupMaxPairs} {
			add("uniform", 8, E, gen(n, func(int) int { return r.IntN(E) }))
			add("last", 8, E, gen(n, func(int) int { return E - 1 }))
		}
	}
	add("empty", 8, 256, nil)
	return cs
}

// TestMoEGroupWarpsEmulation checks moe_group_warps's arithmetic (on the
// host, moeGroupWarpsEmu) against the definition over moeGroupCases and
// random inputs of every size: offsets, rowids and slot equal.
func TestMoEGroupWarpsEmulation(t *testing.T) {
	// The kernel packs a pair's rank above its expert, rank << 16 in an
	// int: the most pairs must keep that positive (kernels/moe.cu's
	// static_assert), and 2048 rows of top 8 must fit (LongPrefillRows).
	if kernel.MoEGroupMaxPairs >= 1<<15 || kernel.MoEGroupMaxPairs < LongPrefillRows*8 {
		t.Fatalf("MOE_GROUP_MAX_PAIRS %d: rank << 16 overflows or a %d-row pass of top 8 does not fit", kernel.MoEGroupMaxPairs, LongPrefillRows)
	}
	r := rand.New(rand.NewPCG(34, 2026))
	cs := moeGroupCases(r, true)
	for range 200 {
		E := []int{256, 1024, 1 + r.IntN(kernel.MoEMaxExperts)}[r.IntN(3)]
		n := r.IntN(kernel.MoEGroupMaxPairs + 1)
		hot := 1 + r.IntN(E) // experts drawn from the first hot: from every pair alike to all different
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32(r.IntN(hot))
		}
		cs = append(cs, moeGroupCase{fmt.Sprintf("random_%dpairs_of%d_hot%d", n, E, hot), 1 + r.IntN(10), E, ids})
	}
	for _, c := range cs {
		wo, wr, ws := moeGroupRef(c.ids, c.k, c.E)
		go_, gr, gs := moeGroupWarpsEmu(c.ids, c.k, c.E)
		if err := moeGroupSame(go_, gr, gs, wo, wr, ws, c.ids); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	t.Logf("%d inputs", len(cs))
}

// moeGroupSame says where a grouping (offsets, rowids, slot) differs from
// the reference's.
func moeGroupSame(gotOff, gotRow, gotSlot, off, row, slot, ids []int32) error {
	for e := range off {
		if gotOff[e] != off[e] {
			return fmt.Errorf("offsets[%d] = %d, want %d", e, gotOff[e], off[e])
		}
	}
	for p := range slot {
		if gotSlot[p] != slot[p] {
			return fmt.Errorf("pair %d (expert %d): slot %d, want %d", p, ids[p], gotSlot[p], slot[p])
		}
	}
	for s := range row {
		if gotRow[s] != row[s] {
			return fmt.Errorf("sorted position %d: row %d, want %d", s, gotRow[s], row[s])
		}
	}
	return nil
}
