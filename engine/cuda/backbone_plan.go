package cuda

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
)

// This file plans the backbone's device memory besides the weights: the
// per-layer states (DeltaNet conv and recurrent states, attention KV caches
// for the context limit) and the scratch of one prefill chunk, as offsets in
// one work block, so the whole model is admitted (Pool.Admit) before anything
// is allocated.

// BackboneChunk is the DeltaNet reference's chunk length: a prefill pass's
// rows are a multiple of it (but the last), so that passes cut the prompt
// where the CPU's chunked form does.
const BackboneChunk = 64

// DefaultPrefillRows is the rows of one prefill pass by default: longer
// prompts run in passes of this many rows. Every pass reads each routed
// expert its rows use (at the full geometry nearly all of them: ≈ 32 GB),
// so fewer, longer passes read less: a pass's projections, DeltaNet mixers
// and feed-forward take all its rows at once, its attention cores run in
// blocks of MixerRows (their scores' scratch). The scratch grows with
// the pass (≈ 0.4 MiB a row at the full geometry; 512 rows keep the full
// model's tiers on 24 GB cards where 64 had them, TestPlanTierCards).
// A prompt of up to 512 rows (a 10 s voice and its script) is one pass
// (docs/PERF.md "Longer prefill passes"). It is also what the adaptive
// plan (PrefillPassRows) falls back to where the device is short.
const DefaultPrefillRows = 512

// LongPrefillRows is the longest prefill pass the adaptive plan
// (PrefillPassRows) takes: a 30 s reference voice and its script (≈ 750
// rows) and a minute of voice (≈ 1 500) are one pass, their routed experts
// read once rather than two or three times. Its scratch is ≈ 0.8 GiB at the
// full geometry (≈ 0.6 GiB more than 512 rows': ≈ 0.39 MiB a row,
// TestPrefillPassRowsCards), and moe_group's 16 384
// (row, expert) pairs (kernels/moe.cu MOE_GROUP_MAX_PAIRS) are 2048 rows of
// top 8.
const LongPrefillRows = 2048

// PrefillRowsEnv names the environment variable that sets the rows of a
// prefill pass (a positive multiple of BackboneChunk) for benchmarks and
// the diagnosis of longer passes; it overrides the plan
// ($PROSCENIUM_GPU_PREFILL_PLAN).
const PrefillRowsEnv = "PROSCENIUM_GPU_PREFILL_ROWS"

// prefillRows is the rows of a prefill pass: DefaultPrefillRows, or
// $PROSCENIUM_GPU_PREFILL_ROWS when that is a positive multiple of
// BackboneChunk (then prefillRowsSet).
var prefillRows, prefillRowsSet = rowsFromEnvSet(PrefillRowsEnv, DefaultPrefillRows)

// PrefillPlanEnv names the environment variable that chooses how a load
// sets the rows of its prefill passes: "fixed" (DefaultPrefillRows, as
// before pass13) or "auto" (PrefillPassRows: the longest pass that leaves
// the whole model on the device). Unset: defaultPrefillPlan.
const PrefillPlanEnv = "PROSCENIUM_GPU_PREFILL_PLAN"

// The prefill plans ($PROSCENIUM_GPU_PREFILL_PLAN).
const (
	PrefillPlanFixed = "fixed"
	PrefillPlanAuto  = "auto"
)

// defaultPrefillPlan is the plan with $PROSCENIUM_GPU_PREFILL_PLAN unset:
// auto since session 13's runs 2 and 3 on the H200 (docs/PERF.md "pass13":
// 700 rows in one pass 84.0 → 68.8 ms, a 30 s voice's first audio 170 →
// 154 ms, the 785-row prefill the CPU's bits under exact in one pass);
// PROSCENIUM_GPU_PREFILL_PLAN=fixed gives 512-row passes.
const defaultPrefillPlan = PrefillPlanAuto

// prefillPlan is $PROSCENIUM_GPU_PREFILL_PLAN, or defaultPrefillPlan when
// it is unset or names no plan (reported on stderr).
var prefillPlan = prefillPlanFrom(os.Stderr, os.Getenv(PrefillPlanEnv))

// prefillPlanFrom is the plan v names, reporting a bad one on w.
func prefillPlanFrom(w io.Writer, v string) string {
	switch v {
	case "":
		return defaultPrefillPlan
	case PrefillPlanFixed, PrefillPlanAuto:
		return v
	}
	fmt.Fprintf(w, "proscenium-gpu: %s=%q ignored: %q or %q\n", PrefillPlanEnv, v, PrefillPlanFixed, PrefillPlanAuto)
	return defaultPrefillPlan
}

// PrefillPlanNow says how this process sets its prefill passes: the plan
// ($PROSCENIUM_GPU_PREFILL_PLAN or its default), or the rows
// $PROSCENIUM_GPU_PREFILL_ROWS sets.
func PrefillPlanNow() string {
	if prefillRowsSet {
		return fmt.Sprintf("%s=%d", PrefillRowsEnv, prefillRows)
	}
	return "plan " + prefillPlan
}

// prefillPassCandidates are the pass lengths the adaptive plan tries,
// longest first; DefaultPrefillRows is what it keeps when none fits.
var prefillPassCandidates = []int{LongPrefillRows, 1024}

// PrefillPassRows is the one rule for the rows of a load's prefill passes
// (LoadFrames, LoadBackboneSlots, the benchmarks' synthetic loads). With
// $PROSCENIUM_GPU_PREFILL_ROWS set, that; under the fixed plan,
// DefaultPrefillRows; under the auto plan, the longest of LongPrefillRows
// and 1024 rows for which whole(rows) holds — the model planned with passes
// of that many rows fits the device whole: every routed expert on the
// device (PlanTier's TierDevice, under the memory cap and the device's free
// memory less the headroom) and the voice cache granted all it asks — else
// DefaultPrefillRows. Why: every pass reads (nearly) every routed expert
// (≈ 32 GB at the full geometry, ≈ 16 ms on an H200), so a 700-row prompt
// in one pass instead of two saves one read of them; but the scratch is
// ≈ 0.4 MiB a row, and on a card where the experts do not all fit (24–32 GB
// cards, caps) each byte of scratch is a byte of experts moved to host
// memory, read over the bus by every step — so a longer pass is taken only
// where it costs no device-resident experts, and where memory is short the
// load is exactly what it was with 512-row passes (it never fails or tiers
// where it did not). The plan caps a pass at the context (Chunk = min(rows,
// capacity)). An error from whole is returned.
//
// topK is the model's experts a row: a candidate whose rows × topK pass
// the grouping's pairs (MOE_GROUP_MAX_PAIRS, which PlanBackbonePass
// refuses) is not tried.
func PrefillPassRows(topK int, whole func(rows int) (bool, error)) (int, error) {
	return prefillPassRows(prefillPlan, topK, whole)
}

func prefillPassRows(plan string, topK int, whole func(rows int) (bool, error)) (int, error) {
	if prefillRowsSet || plan != PrefillPlanAuto {
		return prefillRows, nil
	}
	for _, rows := range prefillPassCandidates {
		if rows*max(topK, 1) > kernel.MoEGroupMaxPairs {
			continue
		}
		ok, err := whole(rows)
		if err != nil {
			return 0, err
		}
		if ok {
			return rows, nil
		}
	}
	return DefaultPrefillRows, nil
}

// WholeOnDevice is the test PrefillPassRows asks of a tier plan: every
// routed expert on the device and the voice cache granted what it asked.
func WholeOnDevice(p TierPlan, voiceCache int64) bool {
	return p.Tier == TierDevice && p.VoiceCache >= max(voiceCache, 0)
}

// rowsFromEnv is $name when that is a positive multiple of BackboneChunk,
// else def (a bad value is reported on stderr).
func rowsFromEnv(name string, def int) int {
	n, _ := rowsFromEnvSet(name, def)
	return n
}

// rowsFromEnvSet is rowsFromEnv and whether $name gave the rows.
func rowsFromEnvSet(name string, def int) (int, bool) {
	return rowsFrom(os.Stderr, name, os.Getenv(name), def)
}

// rowsFrom is the rows v says (the value of $name), reporting a bad value
// on w.
func rowsFrom(w io.Writer, name, v string, def int) (int, bool) {
	if v == "" {
		return def, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < BackboneChunk || n%BackboneChunk != 0 {
		fmt.Fprintf(w, "proscenium-gpu: %s=%q ignored: not a positive multiple of %d\n", name, v, BackboneChunk)
		return def, false
	}
	return n, true
}

// maxRouteExperts is the routing kernel's bound on experts; its top-k is at
// most 64 (moe_route's shared chosen[64]).
const (
	maxRouteExperts = kernel.MoEMaxExperts
	maxRouteTopK    = 64
)

// BackbonePlan is the work block's layout for a context of Capacity rows
// and Slots takes' states (the B-row step, backbone_rows_cuda.go).
type BackbonePlan struct {
	Capacity, Chunk int
	// Slots is the takes whose states the block holds: slot s's states are
	// slot 0's (States) SlotBytes further on, and its position is the int32
	// at Pos + 4·s.
	Slots     int
	SlotBytes int64
	DeltaNet  DeltaNetGeometry
	Attention AttentionGeometry
	// MoE widths: D = E + 2·Is + 1 outputs of the stacked dense projection.
	E, K, I, P, Is, D, H, Hp, Ip int
	FP8                          bool

	States       []int64 // per layer: offset of its DeltaNet state or KV cache (slot 0's)
	StateBytes   int64   // every slot's states: Slots·SlotBytes
	ScratchBytes int64
	Bytes        int64 // the work block: states, then scratch

	// Scratch offsets (bytes from the block's start).
	X, NormedMix, MixOut, NormedMoE, Dense, Ids, Wts, XRep, GU, Hid, HidS, YR, YS, Toks, Emb, Out, Pos int64
	Offsets, RowIds, Slot                                                                              int64
	// BlockPos: a pass's attention blocks' first positions (int32 per
	// block of MixerRows rows; Backbone.blockPos).
	BlockPos int64
	// RowSlots: the B-row step's slot of each row (int32 [MaxStepRows]).
	RowSlots int64
	// Counters: the fused step's grid-wide tail counters (CounterWords
	// uint32s, zero between launches; kernels/fused.cuh).
	Counters int64
	// GemmSplit: the split-K workspace the backbone lends the device's
	// dense GEMMs (GemmSplitBytes; gemm_splitk_cuda.go), its counters zero
	// between launches.
	GemmSplit int64
	// DeltaNetScratch and AttentionScratch: the mixers' scratch (one
	// region: each layer runs one of them).
	DeltaNetScratch, AttentionScratch int64
}

// geometries converts text_config into the mixers' geometries.
func geometries(t *drama3.TextConfig) (DeltaNetGeometry, AttentionGeometry) {
	eps := float32(t.RMSNormEps)
	dn := DeltaNetGeometry{Hidden: t.HiddenSize, KeyHeads: t.LinearNumKeyHeads, ValueHeads: t.LinearNumValueHeads,
		KeyDim: t.LinearKeyHeadDim, ValueDim: t.LinearValueHeadDim, ConvKernel: t.ConvKernel, Eps: eps}
	at := AttentionGeometry{Hidden: t.HiddenSize, Heads: t.NumHeads, KVHeads: t.NumKVHeads, HeadDim: t.HeadDim,
		RotaryDim: t.RotaryDim(), RopeTheta: t.RopeTheta, Eps: eps}
	return dn, at
}

// XPartsBytes is the scratch the X parts of a pass's widest dense GEMM
// input take (xp15; GemmXPartsBytes): the hidden rows (the mixers' and
// the router's inputs), the mixers' outputs (DeltaNet's value width, the
// attention's heads) and the shared expert's hidden rows.
func (p *BackbonePlan) XPartsBytes() int64 {
	cols := max(p.H, p.Is, p.DeltaNet.ValueHeads*p.DeltaNet.ValueDim, p.Attention.Heads*p.Attention.HeadDim)
	return GemmXPartsBytes(p.Chunk, cols)
}

// PlanBackbone lays out the work block of a backbone with the experts packed
// as x (any layer's: they share the geometry) for capacity rows of context.
func PlanBackbone(cfg *drama3.Config, x ExpertPack, capacity int) (*BackbonePlan, error) {
	return PlanBackboneSlots(cfg, x, capacity, 1)
}

// MaxStepRows is the most rows (takes) one B-row step takes
// (Backbone.StepRows).
const MaxStepRows = 8

// PlanBackboneSlots is PlanBackbone with the states of slots takes (each
// its own DeltaNet, conv and KV state and position) beside one scratch.
func PlanBackboneSlots(cfg *drama3.Config, x ExpertPack, capacity, slots int) (*BackbonePlan, error) {
	return PlanBackbonePass(cfg, x, capacity, slots, prefillRows)
}

// PlanBackbonePass is PlanBackboneSlots with prefill passes of up to rows
// rows (PrefillPassRows chooses them; at most the context's).
func PlanBackbonePass(cfg *drama3.Config, x ExpertPack, capacity, slots, rows int) (*BackbonePlan, error) {
	t := &cfg.Text
	if rows < 1 {
		return nil, fmt.Errorf("gpu backbone: prefill passes of %d rows", rows)
	}
	if capacity < 1 {
		return nil, fmt.Errorf("gpu backbone: context limit %d rows", capacity)
	}
	if slots < 1 {
		return nil, fmt.Errorf("gpu backbone: %d take slots", slots)
	}
	p := &BackbonePlan{Capacity: capacity, Chunk: min(rows, capacity), Slots: slots,
		E: t.NumExperts, K: t.NumExpertsPerTok, I: x.I, P: x.P, Is: t.SharedIntermediate,
		H: t.HiddenSize, Hp: x.Hp, Ip: x.Ip, FP8: x.FP8}
	p.D = p.E + 2*p.Is + 1
	p.DeltaNet, p.Attention = geometries(t)
	var off int64
	take := func(n int64) int64 {
		o := off
		off += (n + arenaAlign - 1) / arenaAlign * arenaAlign
		return o
	}
	hasLin, hasFull := false, false
	for _, k := range t.LayerTypes {
		switch k {
		case drama3.LinearAttention:
			hasLin = true
			p.States = append(p.States, take(p.DeltaNet.StateBytes()))
		case drama3.FullAttention:
			hasFull = true
			p.States = append(p.States, take(p.Attention.KVBytes(capacity)))
		default:
			return nil, fmt.Errorf("gpu backbone: layer kind %q", k)
		}
	}
	if hasLin {
		if err := p.DeltaNet.Validate(); err != nil {
			return nil, err
		}
	}
	if hasFull {
		if err := p.Attention.Validate(); err != nil {
			return nil, err
		}
	}
	if p.K > maxRouteTopK || p.E > maxRouteExperts {
		return nil, fmt.Errorf("gpu backbone: %d experts top-%d (the routing kernel takes at most %d, top-%d)", p.E, p.K, maxRouteExperts, maxRouteTopK)
	}
	// A pass's (row, expert) pairs are grouped by one block (moe_group,
	// its ids in shared memory) and are the grid rows of the per-pair
	// GEMVs (at most 65 535).
	if pairs := p.Chunk * p.K; pairs > kernel.MoEGroupMaxPairs {
		return nil, fmt.Errorf("gpu backbone: prefill passes of %d rows of top-%d experts are %d (row, expert) pairs; the grouping takes at most %d (%s)",
			p.Chunk, p.K, pairs, kernel.MoEGroupMaxPairs, PrefillRowsEnv)
	}
	p.SlotBytes = off
	off = int64(slots) * p.SlotBytes
	p.StateBytes = off
	c, k := int64(p.Chunk), int64(p.K)
	f := func(n int64) int64 { return take(4 * n) }
	p.X = f(c * int64(p.H))
	p.NormedMix = f(c * int64(p.H))
	p.MixOut = f(c * int64(p.H))
	p.NormedMoE = f(c * int64(p.Hp))
	p.Dense = f(c * int64(p.D))
	p.Ids = f(c * k)
	p.Wts = f(c * k)
	// XRep: the per-pair path's replicated rows, or the streamed grouped
	// experts' X parts, or the dense GEMMs' X parts (xp15): at least the
	// parts of the widest dense input (XPartsBytes).
	p.XRep = f(max(c*k*int64(p.Hp), (p.XPartsBytes()+3)/4))
	p.GU = f(c * k * int64(2*p.P))
	p.Hid = f(c * k * int64(p.Ip))
	p.HidS = f(c * int64(p.Is))
	p.YR = f(max(c*k, k+1) * int64(p.H)) // a step's down projections write k+1 rows (MoEDown)
	p.YS = f(c * int64(p.H))
	p.Toks = f(c)
	p.Emb = f(c * int64(p.H))
	p.Out = f(c * int64(p.H))
	p.Pos = f(int64(slots))
	p.RowSlots = f(MaxStepRows)
	p.Offsets = f(int64(p.E + 1))
	p.RowIds = f(c * k)
	p.Slot = f(c * k)
	p.Counters = f(int64(p.CounterWords()))
	p.BlockPos = f(int64((p.Chunk + p.MixerRows() - 1) / p.MixerRows()))
	p.GemmSplit = take(GemmSplitBytes)
	// The mixers' scratch: one region for both kinds, since a layer runs
	// one mixer and nothing in it outlives the layer's call.
	var mixers int64
	if hasLin {
		mixers = p.DeltaNet.ScratchBytes(p.Chunk)
	}
	if hasFull {
		mixers = max(mixers, p.Attention.ScratchBytesBlocks(p.Chunk, p.MixerRows(), capacity))
	}
	if hasLin || hasFull {
		p.DeltaNetScratch = take(mixers)
		p.AttentionScratch = p.DeltaNetScratch
	}
	p.Bytes = off
	p.ScratchBytes = p.Bytes - p.StateBytes
	return p, nil
}

// MixerRows is the rows an attention layer's core (queries, scores,
// partials) runs at once, and the rows of a BlockPos entry: a prefill pass
// longer than that runs its attention cores in blocks of that many rows
// (AttentionLayer.CoreRows),
// between q/k/v and output projections over the whole pass. Its scratch
// holds every score of its rows over the whole context and each split's
// float64 partials (≈ 1.3 MiB a row at the full geometry and 4096 rows of
// context), so it stays one DeltaNet chunk; the DeltaNet layers run the
// whole pass in one call (their chunked kernels carry the state from chunk
// to chunk). $PROSCENIUM_GPU_MIXER_ROWS (a multiple of BackboneChunk)
// overrides it for benchmarks and diagnosis.
func (p *BackbonePlan) MixerRows() int { return min(p.Chunk, mixerRows) }

// mixerRows is BackboneChunk, or $PROSCENIUM_GPU_MIXER_ROWS.
var mixerRows = rowsFromEnv("PROSCENIUM_GPU_MIXER_ROWS", BackboneChunk)

// StepBytes is the device memory one decode step reads or writes at position
// pos, by the kernels' access pattern: every projection matrix of every layer
// (the routed experts only the K chosen, with their scales), the norms and
// small vectors, each DeltaNet state read and written, the pos cached keys
// and values of each attention layer, and one embedding row. Activations
// (a few hundred KiB) are left out.
func (p *BackbonePlan) StepBytes(cfg *drama3.Config, x ExpertPack, pos int) int64 {
	H := int64(p.H)
	n := H * 2 // the embedding row
	dn, at := p.DeltaNet, p.Attention
	for _, k := range cfg.Text.LayerTypes {
		n += 2 * H * 4 // input and post norms
		if k == drama3.LinearAttention {
			vd := int64(dn.ValueHeads * dn.ValueDim)
			n += int64(dn.ProjWidth())*H*2 + H*vd*2
			n += int64(dn.Channels()*dn.ConvKernel)*4 + int64(2*dn.ValueHeads+dn.ValueDim)*4
			n += 2 * dn.StateBytes()
		} else {
			n += int64(at.ProjWidth())*H*2 + H*int64(at.Heads*at.HeadDim)*2 + int64(2*at.HeadDim)*4
			n += int64(pos+1) * int64(at.KVHeads*at.HeadDim) * 4 * 2
		}
		n += int64(p.D)*H*2 + H*int64(p.Is)*2
		n += int64(p.K) * (x.GateUpMatBytes + x.DownMatBytes + int64(x.GateUpScaleCount+x.DownScaleCount)*4)
	}
	return n + H*4 // the final norm
}

// StepRowsBytes is StepBytes for a B-row step of rows takes, each at
// position pos: the dense weights once, each take's states and cached rows,
// and the routed experts the rows choose together, counted as the expected
// distinct experts of rows independent uniform top-K choices of E per layer,
// E·(1 − (1 − K/E)^rows) (synthetic routing is near uniform; real routing
// shares more experts between takes, so fewer bytes).
func (p *BackbonePlan) StepRowsBytes(cfg *drama3.Config, x ExpertPack, pos, rows int) int64 {
	one := p.StepBytes(cfg, x, pos)
	perExpert := x.GateUpMatBytes + x.DownMatBytes + int64(x.GateUpScaleCount+x.DownScaleCount)*4
	layers := int64(len(cfg.Text.LayerTypes))
	noExperts := one - layers*int64(p.K)*perExpert
	var perTake int64 // states and cached rows of one take
	dn, at := p.DeltaNet, p.Attention
	for _, k := range cfg.Text.LayerTypes {
		if k == drama3.LinearAttention {
			perTake += 2 * dn.StateBytes()
		} else {
			perTake += int64(pos+1) * int64(at.KVHeads*at.HeadDim) * 4 * 2
		}
	}
	dense := noExperts - perTake
	E, K := float64(p.E), float64(p.K)
	distinct := E * (1 - math.Pow(1-K/E, float64(rows)))
	return dense + int64(rows)*perTake + int64(float64(layers)*distinct*float64(perExpert))
}

// embeddingSpan is the rows [first, end) from a pass's first embedding row
// (token −1) to its last, empty (0, 0) where it has none.
func embeddingSpan(toks []int32) (first, end int) {
	first = -1
	for i, t := range toks {
		if t < 0 {
			if first < 0 {
				first = i
			}
			end = i + 1
		}
	}
	return max(first, 0), end
}
