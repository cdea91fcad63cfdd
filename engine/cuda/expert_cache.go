package cuda

import (
	"fmt"
	"slices"
)

// This file is the host side of the expert cache of a host tier (tier.go):
// which routed expert sits in which device slot, and which to move. It calls
// no driver, so the policy is tested without a GPU; expert_cache_cuda.go
// carries its decisions out on the device.
//
// The slots are the arena's expert places of the layers the tier put on the
// device (slot l·E + e starts out holding layer l's expert e: the initial
// placement is the tier's whole first layers). The host layers' experts are
// in pinned host memory, which the kernels read over the bus when an expert
// is not in a slot; a device layer's expert has no host copy until it is
// first evicted: then its slot is written back into a pinned backing
// buffer (one of Backing, taken for good: weights do not change), which it
// is read from afterwards. With the backing buffers all taken, only experts
// with a host copy are evicted. Each decode step tallies on the device the uses of every
// (layer, expert) it routes to (expert_addr.cuh); between frames the policy
// folds them into a score per expert (use frequency with decay) and
// promotes the hottest experts read from host memory into the slots of the
// coldest resident ones, when the host expert's score passes the victim's by
// a margin (hysteresis: near-uniform routing, where every score is about the
// same, moves nothing) and at most Budget experts a frame (the copies share
// the bus with the step's own reads over it). The last layer's experts on
// the prefill stage are resident but no slot: never evicted.

// ExpertCacheConfig is the policy's knobs.
type ExpertCacheConfig struct {
	// Decay multiplies every score once a frame before the frame's uses
	// are added: a score is about the uses of the last 1/(1−Decay) frames.
	Decay float64
	// Margin, MinScore and Spread are the hysteresis: a host expert
	// replaces a resident one only when its score exceeds Margin × the
	// resident's score + MinScore + Spread × the mean score of all experts
	// (what uniform routing gives each: its chance fluctuations, which grow
	// with the rows a step routes, must not pass for heat).
	Margin, MinScore, Spread float64
	// Budget is the promotions a frame may start (each copies one expert
	// over the bus).
	Budget int
}

// DefaultExpertCacheConfig: scores over about 20 frames (an expert used
// every frame scores 20 a row); a promotion needs 1.5 times the victim's
// score, four more uses' worth and four times the uniform share: at Drama
// 3's geometry uniform routing then moves nothing in 300 frames of one take
// or four (TestExpertCacheUniformRouting; a floor of 2 moved 9 and 7); four
// experts a frame (about 12 MB, half a millisecond at 25 GB/s).
var DefaultExpertCacheConfig = ExpertCacheConfig{Decay: 0.95, Margin: 1.5, MinScore: 4, Spread: 4, Budget: 4}

// Where an expert is read (ExpertCachePolicy.Where) besides a slot index.
const (
	ExpertOnHost  = -1 // its pinned host copy, over the bus
	ExpertOnStage = -2 // the prefill stage (the home layer)
)

// ExpertSwap is one promotion: Promote's expert (key l·E + e) moves into
// Slot, whose resident Evict (−1: the slot was empty) goes back to being
// read from host memory: from its host copy, or, WriteBack ≥ 0, from that
// backing buffer once the slot is copied there.
type ExpertSwap struct {
	Slot, Evict, Promote, WriteBack int
}

// ExpertCacheStats are the cache's counts since the load.
type ExpertCacheStats struct {
	Hits, Misses           int64 // routed (row, expert) pairs of decode steps read on the device / over the bus
	Promotions, Evictions  int64
	PromotedBytes          int64 // copied over the bus into slots
	WriteBacks             int64 // evicted experts copied into backing buffers (the bus's other direction)
	MissBytes              int64 // read over the bus by the steps' kernels (Misses × expert bytes)
	Resident, Slots, Total int   // experts read on the device now, slots, experts in all
	Frames                 int64 // frames whose statistics were folded in
}

// HitRate is Hits over all pairs (1 with none).
func (s ExpertCacheStats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 1
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// BusBytesPerFrame is the bytes the bus carried per frame: the steps'
// reads of host experts and the promotions' copies.
func (s ExpertCacheStats) BusBytesPerFrame() float64 {
	if s.Frames == 0 {
		return 0
	}
	return float64(s.MissBytes+s.PromotedBytes) / float64(s.Frames)
}

// ExpertCachePolicy is the placement of a host tier's experts and the
// scores it is changed by.
type ExpertCachePolicy struct {
	Config          ExpertCacheConfig
	Layers, Experts int
	ExpertBytes     int64
	where           []int  // per key: slot, ExpertOnHost or ExpertOnStage
	owner           []int  // per slot: key, or −1
	pending         []bool // per key: promoted, its copy not yet done (read from host until then)
	evicting        []bool // per key: evicted, its table entry not yet switched (EvictDone)
	backing         []int  // per key: its backing buffer, −1 none (host layers have their copy)
	backingUsed     int    // backing buffers taken, of Backing
	Backing         int
	score           []float64
	last            []uint32 // per key: the device's use count at the last fold
	stats           ExpertCacheStats
}

// NewExpertCachePolicy places layers × experts keys as a tier did: the
// first deviceLayers layers' experts in their own slots, the stage layer's
// (−1: none) on the stage, the rest in host memory; backing buffers for
// that many evicted device-layer experts.
func NewExpertCachePolicy(cfg ExpertCacheConfig, layers, experts, deviceLayers, stageLayer, backing int, expertBytes int64) (*ExpertCachePolicy, error) {
	if layers <= 0 || experts <= 0 || deviceLayers < 0 || deviceLayers > layers || stageLayer >= layers || stageLayer >= 0 && stageLayer < deviceLayers || backing < 0 {
		return nil, fmt.Errorf("expert cache: %d layers of %d experts, %d on the device, stage layer %d, %d backing buffers", layers, experts, deviceLayers, stageLayer, backing)
	}
	if cfg.Decay < 0 || cfg.Decay > 1 || cfg.Margin < 1 || cfg.MinScore < 0 || cfg.Spread < 0 || cfg.Budget < 0 {
		return nil, fmt.Errorf("expert cache: bad policy %+v (decay in [0, 1], margin ≥ 1, min score, spread and budget ≥ 0)", cfg)
	}
	n := layers * experts
	c := &ExpertCachePolicy{Config: cfg, Layers: layers, Experts: experts, ExpertBytes: expertBytes,
		where: make([]int, n), owner: make([]int, deviceLayers*experts), pending: make([]bool, n),
		evicting: make([]bool, n), backing: make([]int, n), Backing: backing,
		score: make([]float64, n), last: make([]uint32, n)}
	for k := range c.where {
		c.backing[k] = -1
		switch l := k / experts; {
		case l < deviceLayers:
			c.where[k], c.owner[k] = k, k
		case l == stageLayer:
			c.where[k] = ExpertOnStage
		default:
			c.where[k] = ExpertOnHost
		}
	}
	return c, nil
}

// Where is where key's expert is read by the steps enqueued from now on:
// its slot, ExpertOnHost or ExpertOnStage. A promoted expert whose copy is
// in flight reads ExpertOnHost until Done.
func (c *ExpertCachePolicy) Where(key int) int {
	if c.pending[key] {
		return ExpertOnHost
	}
	return c.where[key]
}

// HomeSlot is the slot layer l's expert e starts in (−1: not a device layer).
func (c *ExpertCachePolicy) HomeSlot(l, e int) int {
	if k := l*c.Experts + e; k < len(c.owner) {
		return k
	}
	return -1
}

// Intact says whether device layer l's slots hold its own experts, each
// where the layout put it, readable now (a prefill then reads the layer in
// the arena as laid out).
func (c *ExpertCachePolicy) Intact(l int) bool {
	for e := range c.Experts {
		k := l*c.Experts + e
		if k >= len(c.owner) || c.owner[k] != k || c.pending[k] {
			return false
		}
	}
	return true
}

// Fold adds a frame's uses: uses is the device's running count per key
// (it wraps at 2³²: the difference is taken modulo), hits and misses the
// frame's new pairs. Every score decays once.
func (c *ExpertCachePolicy) Fold(uses []uint32, hits, misses int64) error {
	if len(uses) != len(c.score) {
		return fmt.Errorf("expert cache: %d use counts for %d experts", len(uses), len(c.score))
	}
	for k, u := range uses {
		c.score[k] = c.score[k]*c.Config.Decay + float64(u-c.last[k])
		c.last[k] = u
	}
	c.stats.Hits += hits
	c.stats.Misses += misses
	c.stats.MissBytes += misses * c.ExpertBytes
	c.stats.Frames++
	return nil
}

// Plan chooses this frame's promotions (at most Config.Budget) and applies
// them to the placement: each evicted expert is read from host memory from
// now on, each promoted one too until Done(its key). The hottest host
// experts go first, each into the slot of the coldest resident expert left,
// while the hysteresis allows.
func (c *ExpertCachePolicy) Plan() []ExpertSwap {
	if c.Config.Budget == 0 || len(c.owner) == 0 {
		return nil
	}
	var mean float64
	for _, s := range c.score {
		mean += s
	}
	floor := c.Config.MinScore + c.Config.Spread*mean/float64(len(c.score))
	var hot, cold []int // host keys, hottest first; slots, coldest resident first
	for k, w := range c.where {
		if w == ExpertOnHost && !c.evicting[k] && c.score[k] > floor {
			hot = append(hot, k)
		}
	}
	if len(hot) == 0 {
		return nil
	}
	for s, k := range c.owner {
		if k < 0 || !c.pending[k] {
			cold = append(cold, s)
		}
	}
	byScore := func(k int) float64 {
		if k < 0 {
			return -1
		}
		return c.score[k]
	}
	slices.SortStableFunc(hot, func(a, b int) int { return cmpFloat(c.score[b], c.score[a]) })
	slices.SortStableFunc(cold, func(a, b int) int { return cmpFloat(byScore(c.owner[a]), byScore(c.owner[b])) })
	var swaps []ExpertSwap
	j := 0 // the next victim
	for _, k := range hot {
		if len(swaps) == c.Config.Budget {
			break
		}
		// The coldest victim that can leave: one with a host copy, or any
		// while a backing buffer is free.
		for j < len(cold) && c.owner[cold[j]] >= 0 && !c.hasCopy(c.owner[cold[j]]) && c.backingUsed == c.Backing {
			j++
		}
		if j == len(cold) {
			break
		}
		s := cold[j]
		v := c.owner[s]
		if v >= 0 && c.score[k] <= c.Config.Margin*c.score[v]+floor {
			break // the rest are colder, the victims hotter
		}
		j++
		sw := ExpertSwap{Slot: s, Evict: v, Promote: k, WriteBack: -1}
		if v >= 0 {
			if !c.hasCopy(v) {
				c.backing[v] = c.backingUsed
				c.backingUsed++
				sw.WriteBack = c.backing[v]
				c.stats.WriteBacks++
			}
			c.where[v], c.evicting[v] = ExpertOnHost, true
			c.stats.Evictions++
		}
		c.owner[s], c.where[k], c.pending[k] = k, s, true
		c.stats.Promotions++
		c.stats.PromotedBytes += c.ExpertBytes
		swaps = append(swaps, sw)
	}
	return swaps
}

// hasCopy says whether key's expert has a copy in host memory: a host
// layer's (the stage layer's included), or a backing buffer.
func (c *ExpertCachePolicy) hasCopy(key int) bool {
	return key >= len(c.owner) || c.backing[key] >= 0
}

// Backed is key's backing buffer (−1: none; a host layer's expert is in
// its layer's host block).
func (c *ExpertCachePolicy) Backed(key int) int { return c.backing[key] }

// EvictDone marks key's eviction complete: its table entry reads its host
// copy, its old slot may be overwritten; it may be promoted again.
func (c *ExpertCachePolicy) EvictDone(key int) { c.evicting[key] = false }

// Done marks key's promotion complete: its slot holds it, the steps may read it there.
func (c *ExpertCachePolicy) Done(key int) { c.pending[key] = false }

// Stats is the counts now.
func (c *ExpertCachePolicy) Stats() ExpertCacheStats {
	s := c.stats
	s.Slots, s.Total = len(c.owner), len(c.where)
	for k := range c.where {
		if c.Where(k) != ExpertOnHost {
			s.Resident++
		}
	}
	return s
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// expertParts is expert e's four parts in pack x read at base: gate_up
// matrix, its scales, down matrix, its scales (the table's words,
// kernels/expert_addr.cuh), and their bytes.
func expertParts(x ExpertPack, base uintptr, e int) (addr [4]uintptr, bytes [4]int64) {
	bytes = [4]int64{x.GateUpMatBytes, int64(x.GateUpScaleCount) * 4, x.DownMatBytes, int64(x.DownScaleCount) * 4}
	offs := [4]int64{x.GateUp, x.GateUpS, x.Down, x.DownS}
	for i := range addr {
		addr[i] = base + uintptr(offs[i]+int64(e)*bytes[i])
	}
	if !x.FP8 {
		bytes[1], bytes[3] = 0, 0
		addr[1], addr[3] = 0, 0
	}
	return addr, bytes
}

// ExpertCacheBytes is the device memory of the expert cache of layers
// layers of experts experts: the table (4 addresses an expert) and the
// statistics (two counts a layer, one an expert).
func ExpertCacheBytes(layers, experts int) int64 {
	return int64(layers*experts)*4*8 + int64(layers*(2+experts))*4
}

// Since is s less the counts of an earlier snapshot a (the placement's
// figures, Resident, Slots and Total, stay s's).
func (s ExpertCacheStats) Since(a ExpertCacheStats) ExpertCacheStats {
	s.Hits -= a.Hits
	s.Misses -= a.Misses
	s.Promotions -= a.Promotions
	s.WriteBacks -= a.WriteBacks
	s.Evictions -= a.Evictions
	s.PromotedBytes -= a.PromotedBytes
	s.MissBytes -= a.MissBytes
	s.Frames -= a.Frames
	return s
}

// ExpertCacheBackingExperts is the backing buffers a host tier pins for
// evicted device-layer experts (about 1.5 GiB at Drama 3's geometry):
// beyond them the cache evicts only experts with a host copy.
const ExpertCacheBackingExperts = 512

// backingStride is one backing buffer's bytes: an expert's four parts,
// each 256-byte aligned (the table's host bit needs the low bit free).
func backingStride(expertBytes int64) int64 {
	return (expertBytes + 4*arenaAlign + arenaAlign - 1) / arenaAlign * arenaAlign
}

// backingParts is expert parts of pack x in backing buffer i of the block
// at base: the parts' addresses and bytes.
func backingParts(x ExpertPack, base uintptr, i int) (addr [4]uintptr, bytes [4]int64) {
	_, bytes = expertParts(x, 0, 0)
	off := uintptr(int64(i) * backingStride(x.ExpertBytes()))
	for p := range addr {
		if bytes[p] > 0 {
			addr[p] = base + off
		}
		off += uintptr((bytes[p] + arenaAlign - 1) / arenaAlign * arenaAlign)
	}
	return addr, bytes
}

// ExpertCacheBacking is the pinned bytes of the backing buffers of a tier
// with deviceExperts experts in slots.
func ExpertCacheBacking(deviceExperts int, expertBytes int64) int64 {
	return int64(min(deviceExperts, ExpertCacheBackingExperts)) * backingStride(expertBytes)
}
