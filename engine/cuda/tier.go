package cuda

import (
	"errors"
	"fmt"
)

// This file decides, before anything is allocated, where a model's bytes
// live: all on the device ("fits on the device"), or, when the device budget
// (free memory less the headroom, and the memory cap) is smaller than the
// model, the dense part (every weight but the routed experts, the tower,
// heads, codebooks, codec, states and caches) on the device with the routed
// experts of as many layers as fit beside it, and the other layers' experts
// in pinned host memory, which the expert kernels read over the bus.
// A host tier also keeps one layer's worth of device memory (the stage) to
// stream a prefill through: a pass of many rows copies each host layer's
// experts there at the link's copy rate (those its rows route to:
// expert_stage_cuda.go) and runs the same kernels on them, rather than
// reading an expert over the bus once per (row, expert) pair.
// Between passes the stage holds the last layer's experts (every pass
// streams the host layers in order, so it ends with them there): decode
// steps read that layer from the device too, and the stage costs no layer.
// The tensors a step reads a few rows of by token id (the token embedding,
// and the LM head, which only the semantic head's gather at load reads)
// also move to pinned host memory under the host tier (TierInput.HostDense):
// a step reads one embedding row over the bus, and their device memory
// holds experts, which every step reads, instead.
//
// The initial split is by whole layers, first layers on the device, and
// every layer's experts also have a pinned host copy: from the first step
// on, an expert cache (expert_cache.go) moves single experts between the
// two. The decode step's expert kernels read each expert's address from a
// per-(layer, expert) table on the device (kernels/expert_addr.cuh), so the
// step stays one captured graph while the cache promotes the experts the
// routing uses most into the slots of the least used. With near-uniform
// routing nothing moves (hysteresis), and every expert a step routes to is
// read once, on whichever side it lives: the share of reads served from the
// device is then the share of layers read there, and the bus carries, per
// decode step of one take, top-k experts of every host layer, and per
// prefill pass every host layer's experts once (the model below, pure
// arithmetic tested in CI; the cache's own counts are measured).

// Tier is where the routed experts live.
type Tier int

const (
	// TierDevice: every weight on the device.
	TierDevice Tier = iota
	// TierHostExperts: the routed experts of the last layers in pinned host
	// memory, read by the kernels over the bus.
	TierHostExperts
)

func (t Tier) String() string {
	if t == TierHostExperts {
		return "experts in host memory"
	}
	return "fits on the device"
}

// DefaultHostReserve is the host memory a load leaves available to the rest
// of the machine (the studio, the desktop) beyond the pinned experts: pinned
// pages cannot be swapped, so taking the last of them starves everything else.
const DefaultHostReserve = 4 << 30

// TierInput is what the tier depends on: the model's bytes and the memory of
// the device and the host now.
type TierInput struct {
	// ModelBytes is the device memory the model takes with every weight on
	// the device (FramesBytes, plus the codec's).
	ModelBytes int64
	// LayerExperts is each backbone layer's routed experts: the span of the
	// arena they take (ExpertPack.SpanBytes).
	LayerExperts []int64
	// ExpertBytes is one expert's bytes as a step reads them
	// (ExpertPack.ExpertBytes), and TopK the experts each row routes to.
	ExpertBytes int64
	TopK        int
	// Experts is the routed experts of a layer (the expert cache's table
	// has a row of them per layer).
	Experts int

	DeviceFree int64 // the device's free memory now
	Headroom   int64 // device memory kept free for the driver and kernels
	Cap        int64 // the device memory cap (0: none)
	CapHeld    int64 // device bytes already held under the cap

	// HostAvailable is the host memory the machine can give now
	// (MemAvailable); HostReserve is left to the rest of it. Only a host
	// tier reads them.
	HostAvailable int64
	HostReserve   int64

	// HostDense is the bytes of the dense tensors read a few rows at a time
	// (WeightLayout.SparseBytes): under the host tier they live in pinned
	// host memory, off the device.
	HostDense int64

	// VoiceCache is the memory the voice prefix cache asks for. On the
	// device it is granted only from what is left once every weight is
	// there: under the host tier each byte of device memory is worth more
	// as experts, which every step reads, than as cached voices, so there
	// the cache lives in pinned host memory instead (VoiceCacheHost), from
	// what the host has beyond the pinned weights and the reserve.
	VoiceCache int64
	// VoiceCacheAuto makes VoiceCache a floor (no size was set): the cache
	// gets AutoVoiceCache of the room left for it where that is more (on
	// the device beside the model; under the host tier in pinned host
	// memory beside the pinned weights and the reserve).
	VoiceCacheAuto bool
}

// TierPlan is where a load puts the model's bytes.
type TierPlan struct {
	Tier   Tier
	Budget int64 // device bytes the load may take
	Device int64 // device bytes the load admits
	// Dense is the device bytes of everything but the routed experts: the
	// model less its routed experts, and under the host tier less HostDense.
	Dense int64
	// Stage (host tier) is the device buffer a prefill streams a host
	// layer's experts through; between passes it holds the last layer's.
	// CacheTable is the expert cache's table and statistics, and
	// CacheBacking (pinned, part of Host) its buffers for evicted
	// device-layer experts.
	Stage        int64
	CacheTable   int64
	CacheBacking int64
	// Experts is every routed expert's bytes; DeviceExperts of them start
	// in the arena (the first DeviceLayers layers' of Layers), HostExperts
	// in pinned host memory only (the other layers', the last one's also
	// on the stage). HostDense is the dense tensors in pinned host memory,
	// and Host all the pinned bytes: HostExperts, HostDense and CacheBacking.
	Experts       int64
	DeviceExperts int64
	HostExperts   int64
	HostDense     int64
	Host          int64
	DeviceLayers  int
	Layers        int
	// ExpertBytes and TopK as in the input: the bus arithmetic.
	ExpertBytes int64
	TopK        int
	// HostAvailable is what the host had at the decision (host tier only).
	HostAvailable int64
	// VoiceCache is the device memory granted to the voice prefix cache
	// (part of Device): what it asked for, less what the budget lacks; 0
	// under the host tier. VoiceCacheHost is the pinned host memory granted
	// to it under the host tier (not part of Host: snapshots are allocated
	// as voices are cached): what it asked for, less what the host lacks
	// beyond Host and the reserve. A restore then copies a snapshot over
	// the bus (a 10 s voice's 169 MB) instead of a prefill whose every pass
	// reads the host layers' experts over it.
	VoiceCache     int64
	VoiceCacheHost int64
	// PrefillRows is the rows of the backbone's prefill passes the load
	// planned with (PrefillPassRows; 0: not said): the load's memory line
	// says it.
	PrefillRows int
	// NoDrawnTables says the plan left the tower's drawn-code tables out
	// (PlanTierTablesFirst): the model did not fit the device whole with
	// them. The load's tower then runs without them (TowerOptions).
	NoDrawnTables bool
}

// ErrDoesNotFit is returned (wrapped) when no tier fits the device or the
// host: the message has the numbers.
var ErrDoesNotFit = errors.New("the model does not fit")

// PlanTier chooses the tier for in. It refuses, with the numbers, a budget
// too small for the dense part, and a host tier whose pinned experts (plus
// the reserve) pass the host's available memory.
func PlanTier(in TierInput) (TierPlan, error) {
	var experts int64
	for _, b := range in.LayerExperts {
		if b < 0 {
			return TierPlan{}, fmt.Errorf("memory tier: a layer of %d expert bytes", b)
		}
		experts += b
	}
	if in.ModelBytes < experts+max(in.HostDense, 0) || in.ModelBytes <= 0 || in.HostDense < 0 {
		return TierPlan{}, fmt.Errorf("memory tier: model of %d bytes with %d bytes of routed experts and %d of host-capable dense tensors", in.ModelBytes, experts, in.HostDense)
	}
	p := TierPlan{Dense: in.ModelBytes - experts, Experts: experts, Layers: len(in.LayerExperts),
		ExpertBytes: in.ExpertBytes, TopK: in.TopK}
	p.Budget = in.DeviceFree - in.Headroom
	limit := fmt.Sprintf("%s free on the device less %s headroom", gib(in.DeviceFree), gib(in.Headroom))
	var overCap error // the cap, when it is what limits the budget
	if in.Cap > 0 && in.Cap-in.CapHeld <= p.Budget {
		overCap = ErrOverCap
		p.Budget = in.Cap - in.CapHeld
		limit = fmt.Sprintf("the memory cap of %s", gib(in.Cap))
		if in.CapHeld > 0 {
			limit += fmt.Sprintf(" less %s already held", gib(in.CapHeld))
		}
	}
	if in.ModelBytes <= p.Budget {
		p.VoiceCache = voiceCacheIn(in, p.Budget-in.ModelBytes)
		p.Tier, p.Device, p.DeviceExperts, p.DeviceLayers = TierDevice, in.ModelBytes+p.VoiceCache, experts, p.Layers
		return p, nil
	}
	for _, b := range in.LayerExperts {
		p.Stage = max(p.Stage, b)
	}
	p.HostDense = in.HostDense
	p.Dense -= p.HostDense
	if p.Dense+p.Stage+ExpertCacheBytes(p.Layers, in.Experts) > p.Budget || p.Layers == 0 {
		err := fmt.Errorf("%w: the model needs %s on the device even with every routed expert in host memory (weights other than the experts and the token embedding, tower, codec, caches, and one layer's experts, %s, to stream a prefill through); the budget is %s (%s)",
			ErrDoesNotFit, gib(p.Dense+p.Stage), gib(p.Stage), gib(max(p.Budget, 0)), limit)
		if overCap != nil {
			err = fmt.Errorf("%w: %w", err, overCap)
		}
		return p, err
	}
	p.CacheTable = ExpertCacheBytes(p.Layers, in.Experts)
	p.Tier, p.Device = TierHostExperts, p.Dense+p.Stage+p.CacheTable
	// The last layer's experts live on the stage (and in host memory, where
	// a pass copies them from), never in the arena.
	for _, b := range in.LayerExperts[:p.Layers-1] {
		if p.Device+b > p.Budget {
			break
		}
		p.Device += b
		p.DeviceExperts += b
		p.DeviceLayers++
	}
	p.HostExperts = experts - p.DeviceExperts
	p.CacheBacking = ExpertCacheBacking(p.DeviceLayers*in.Experts, in.ExpertBytes)
	p.Host = p.HostExperts + p.HostDense + p.CacheBacking
	p.HostAvailable = in.HostAvailable
	if p.Host+in.HostReserve > in.HostAvailable {
		return p, fmt.Errorf("%w: %s (%s of the model's %s on the device); the host has %s available, %s short of the %s of pinned weights and the %s left to the rest of the machine",
			ErrDoesNotFit, p.tierSentence(), gib(p.Device), gib(in.ModelBytes), gib(in.HostAvailable),
			gib(p.Host+in.HostReserve-in.HostAvailable), gib(p.Host), gib(in.HostReserve))
	}
	p.VoiceCacheHost = voiceCacheIn(in, in.HostAvailable-in.HostReserve-p.Host)
	return p, nil
}

// voiceCacheIn is the voice cache granted where room bytes are left for
// it (the device's beside the model, or under the host tier the host's
// beside the pinned weights and the reserve): what in asks for, or with
// in.VoiceCacheAuto AutoVoiceCache of the room where that is more, never
// more than the room.
func voiceCacheIn(in TierInput, room int64) int64 {
	ask := max(in.VoiceCache, 0)
	if in.VoiceCacheAuto {
		ask = max(ask, AutoVoiceCache(room))
	}
	return max(min(ask, room), 0)
}

// stagePass says whether a pass of n rows reads host layer x's experts
// from the stage (copied at the link's copy rate: the span, or the experts
// its rows route to) rather than in place over the bus: when its (row,
// expert) pairs' reads, each pair reading its expert once (ExpertsGEMV),
// would carry at least the span. The kernels and bytes are the same either
// way, so is the result.
func stagePass(x ExpertPack, n, topK int) bool {
	return int64(n)*int64(topK)*x.ExpertBytes() >= x.SpanBytes()
}

// ReadLayers is the layers whose experts a decode step reads from the
// device: those in the arena and, under the host tier, the last layer's on
// the stage.
func (p TierPlan) ReadLayers() int {
	if p.Tier == TierHostExperts && p.Stage > 0 {
		return min(p.DeviceLayers+1, p.Layers)
	}
	return p.DeviceLayers
}

// DeviceHitRate is the share of a decode step's routed-expert reads served
// from the device: the share of layers read there (ReadLayers; every expert
// of a layer is on one side, so routing does not change it).
func (p TierPlan) DeviceHitRate() float64 {
	if p.Layers == 0 {
		return 1
	}
	return float64(p.ReadLayers()) / float64(p.Layers)
}

// BusBytesPerStep is what one decode step of rows takes reads over the bus:
// each host layer's distinct routed experts, at most top-k per take and
// every expert of the layer in all. Model arithmetic: rows > 1 assumes no
// two takes route to the same expert (the most the bus can carry).
func (p TierPlan) BusBytesPerStep(rows int) int64 {
	if p.Tier != TierHostExperts || p.Layers == 0 {
		return 0
	}
	perLayer := int64(rows) * int64(p.TopK)
	if all := p.Experts / int64(p.Layers) / max(p.ExpertBytes, 1); perLayer > all {
		perLayer = all
	}
	return int64(p.Layers-p.ReadLayers()) * perLayer * p.ExpertBytes
}

func (p TierPlan) tierSentence() string {
	if p.Tier == TierDevice {
		return fmt.Sprintf("fits on the device: %s", gib(p.Device))
	}
	voices := ""
	if p.VoiceCacheHost > 0 {
		voices = fmt.Sprintf("; cached voices up to %s in host memory", gib(p.VoiceCacheHost))
	}
	return fmt.Sprintf("experts in host memory: %s on the device (the experts of %d of %d layers to start with, one on the prefill stage; an expert cache then moves single experts), %s in host memory (pinned), the token embedding, LM head and the cache's write-back buffers among them%s",
		gib(p.DeviceExperts+p.Stage), p.ReadLayers(), p.Layers, gib(p.Host), voices)
}

// String says the tier as the load announces it.
func (p TierPlan) String() string {
	passes := ""
	if p.PrefillRows > 0 {
		passes = fmt.Sprintf("; prefill passes of %d rows", p.PrefillRows)
	}
	if p.NoDrawnTables {
		passes += "; the tower's eh_proj tables left out"
	}
	if p.Tier == TierDevice {
		return fmt.Sprintf("fits on the device: %s of a %s budget, cached voices up to %s of it%s", gib(p.Device), gib(p.Budget), gib(p.VoiceCache), passes)
	}
	return fmt.Sprintf("%s; %s on the device in all of a %s budget; a decode step reads %.1f %% of its experts on the device and %s over the bus%s",
		p.tierSentence(), gib(p.Device), gib(p.Budget), 100*p.DeviceHitRate(), decimalBytes(p.BusBytesPerStep(1)), passes)
}

// decimalBytes writes a size in GB, or MB below one GB (bus traffic, as
// link rates are given in GB/s).
func decimalBytes(b int64) string {
	if b < 1e9 {
		return fmt.Sprintf("%.1f MB", float64(b)/1e6)
	}
	return fmt.Sprintf("%.2f GB", float64(b)/1e9)
}

// gib writes a size in GiB, or MiB below one GiB (small models).
func gib(b int64) string {
	if b < 1<<30 && b > -1<<30 {
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
}

// PlanTierHere is PlanTier with this machine's available host memory
// (HostMemAvailable) and in.HostReserve (0: DefaultHostReserve); a host
// whose memory cannot be read is an error only when the plan needs it.
func PlanTierHere(in TierInput) (TierPlan, error) {
	host, hostErr := HostMemAvailable()
	in.HostAvailable = host
	if in.HostReserve == 0 {
		in.HostReserve = DefaultHostReserve
	}
	p, err := PlanTier(in)
	if err == nil && p.Tier == TierHostExperts && hostErr != nil {
		return p, fmt.Errorf("memory tier: %s, but the host's available memory is unknown: %w", p, hostErr)
	}
	return p, err
}
