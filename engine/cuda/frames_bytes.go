package cuda

import (
	"fmt"

	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
)

// This file is the device memory a model takes on the GPU, computed from its
// config and stored tensors alone (no device): the load admits exactly these
// bytes before allocating, and the studio shows them before a load. It has
// no build tag, so the untagged program can ask.

// TowerMaxRows bounds the tower's KV cache (rows a take may reach), and
// TowerAttnSplits is the key ranges one row's tower attention is split into
// (kernels/attention.cu ATTN_SPLITS).
const (
	TowerMaxRows    = 8192
	TowerAttnSplits = kernel.AttnSplits
)

// DefaultTowerPrefillChunk is the tower's prompt rows per pass by default
// (TowerOptions.PrefillChunk): each pass reads the tower's weights once
// (13 layers, 12 launches each), so 256 rows read them and launch a quarter
// as often as 64 did; its scratch is ≈ 0.33 MiB a row at the full geometry
// (mostly the attention's per-split partials).
const DefaultTowerPrefillChunk = 256

// DefaultFramesCapacity is the rows of a take by default: a long prompt and
// about a minute and a half of audio.
const DefaultFramesCapacity = 4096

func framesCapacity(c int) int {
	if c == 0 {
		return DefaultFramesCapacity
	}
	return c
}

// TowerStateBytes is the device memory NewTower allocates for g with
// maxRows cache rows and prefillChunk rows per pass (0:
// DefaultTowerPrefillChunk), one take.
func TowerStateBytes(g TowerGeometry, maxRows, prefillChunk int) int64 {
	return TowerTakesStateBytes(g, maxRows, prefillChunk, 1)
}

// TowerTakesStateBytes is TowerStateBytes of a tower of takes slots
// (TowerOptions.Takes): each slot's control block, caches, logits and
// feedback row, one scratch of max(prefillChunk, takes) rows, and the drawn
// codes' and code 0's eh_proj tables (towerDrawnEHLayout: 344 MB at Drama 3's
// geometry).
func TowerTakesStateBytes(g TowerGeometry, maxRows, prefillChunk, takes int) int64 {
	if prefillChunk == 0 {
		prefillChunk = DefaultTowerPrefillChunk
	}
	takes = max(takes, 1)
	k := int64(takes)
	n, D := int64(max(prefillChunk, takes)), int64(g.Dim)
	width := int64((g.Heads + 2*g.KVHeads) * g.HeadDim)
	layers := int64(g.SharedLayers + g.ResidualLayers())
	half := int64(g.RotaryDim / 2)
	sizes := []int64{k * frameCtrlWords * 4, k * layers * 2 * int64(maxRows) * int64(g.KVHeads*g.HeadDim) * 4,
		2 * int64(maxRows) * half * 4, n * 4, n * 2 * D * 4, n * D * 4, n * D * 4, n * D * 4, n * D * 4,
		n * width * 4, n * int64(g.Heads*g.HeadDim) * 4, n * int64(g.Heads*TowerAttnSplits*(g.HeadDim+2)) * 4,
		n * int64(g.Heads) * 4, max(n, 2) * int64(g.FFN) * 4, n * int64(g.FFN) * 4, 8, k * int64(g.Entries[0]+1) * 4}
	for _, e := range g.Entries[1:] {
		sizes = append(sizes, k*int64(e)*4)
	}
	sizes = append(sizes, k*D*4, int64(len(g.Entries))*8, int64(len(g.Entries))*4, int64(g.Entries[0])*4)
	if eh := towerDrawnEHLayout(g, towerEH, towerEH0).size; eh > 0 {
		sizes = append(sizes, eh) // the drawn codes' eh_proj tables (tower_drawn_eh.go)
	}
	var total int64
	for _, s := range sizes {
		total += max(s, 4)
	}
	return total
}

// FramesBytes is the device memory a model of layout needs for a context of
// capacity rows (0: DefaultFramesCapacity): the weight arena (backbone,
// tower, heads, codebooks), the backbone's states and scratch, the tower's
// caches and scratch, the tower binding's extras (an upper bound: float32
// copies of every tower norm and a gathered semantic head), and what a
// reference-voice prompt allocates while it begins (PromptScratchBytes). The
// codec's weights and stream are apart (CodecBytes, on the GPU side), as is
// the frame result's pinned host memory.
func FramesBytes(cfg *drama3.Config, layout *WeightLayout, capacity int) (int64, *BackbonePlan, error) {
	return FramesSlotsBytes(cfg, layout, capacity, 1)
}

// FramesSlotsBytes is FramesBytes of frames whose backbone and tower hold
// slots takes' states (FramesOptions.Batched: TakeFrames): the weights once,
// the backbone's plan of slots (PlanBackboneSlots), the tower of slots
// (TowerTakesStateBytes), one prompt's scratch (takes begin one at a time).
func FramesSlotsBytes(cfg *drama3.Config, layout *WeightLayout, capacity, slots int) (int64, *BackbonePlan, error) {
	return FramesPassBytes(cfg, layout, capacity, slots, prefillRows)
}

// FramesPassBytes is FramesSlotsBytes with the backbone's prefill passes of
// up to rows rows (PlanBackbonePass; PrefillPassRows chooses them).
func FramesPassBytes(cfg *drama3.Config, layout *WeightLayout, capacity, slots, rows int) (int64, *BackbonePlan, error) {
	capacity = framesCapacity(capacity)
	if len(layout.Experts) == 0 {
		return 0, nil, fmt.Errorf("gpu backbone: no layers")
	}
	plan, err := PlanBackbonePass(cfg, layout.Experts[0], capacity, slots, rows)
	if err != nil {
		return 0, nil, err
	}
	g, err := TowerGeometryOf(&cfg.Audio)
	if err != nil {
		return 0, nil, err
	}
	tw := TowerTakesStateBytes(g, min(capacity, TowerMaxRows), 0, slots)
	layers := int64(g.SharedLayers + g.ResidualLayers())
	extras := layers*5*int64(g.Dim)*4 + int64(g.Entries[0]+1)*int64(g.Dim)*2 + int64(g.Entries[0]+1)*4 + (layers*5+2)*256
	return layout.Bytes + plan.Bytes + tw + extras + PromptScratchBytes(capacity, cfg.Text.HiddenSize), plan, nil
}

// PromptScratchBytes bounds what a prompt with reference frames allocates
// while it begins (frame_prompt_cuda.go), for a context of capacity rows of
// hidden floats: every row an audio row, its control block and feedback row,
// or every row's tower codes (uploadRowCodes), whichever is larger.
func PromptScratchBytes(capacity, hidden int) int64 {
	rows := int64(framesCapacity(capacity))
	feedback := rows * int64(frameCtrlWords+hidden) * 4
	forced := rows * int64(1+frameMaxCodebooks) * 4
	return max(feedback, forced)
}

// ModelBytes reads the checkpoint directory dir's config and safetensors
// headers and returns FramesBytes of its layout and the default voice
// prefix cache: what the GPU backend admits for the weights, states,
// scratch and cached voices of one take before a load with every weight on
// the device (the codec apart).
func ModelBytes(dir string, capacity int) (int64, error) { return ModelTakesBytes(dir, capacity, 1) }

// ModelTakesBytes is ModelBytes for takes live together (FramesOptions.Takes):
// the weights and the voice cache once, each take's states and scratch
// (FramesBytes less the weights) takes times.
func ModelTakesBytes(dir string, capacity, takes int) (int64, error) {
	in, err := ModelTierInput(dir, capacity, takes)
	return in.ModelBytes + in.VoiceCache, err
}

// ModelTierInput is TierModel for the checkpoint directory dir with takes
// live together (its config and safetensors headers; the codec is not
// counted): what the studio plans a tier with before a load.
func ModelTierInput(dir string, capacity, takes int) (TierInput, error) {
	if takes < 1 {
		return TierInput{}, fmt.Errorf("gpu memory: %d takes", takes)
	}
	ck, err := drama3.Load(dir)
	if err != nil {
		return TierInput{}, err
	}
	defer ck.Close()
	layout, err := LayoutWeights(ck.Weights)
	if err != nil {
		return TierInput{}, err
	}
	n, _, err := FramesBytes(ck.Config, layout, capacity)
	if err != nil {
		return TierInput{}, err
	}
	in := TierModel(ck.Config, layout, n+int64(takes-1)*(n-layout.Bytes))
	in.VoiceCache = DefaultPrefixCacheBytes
	return in, nil
}

// TierModel is the model's side of a tier decision (PlanTier): modelBytes
// on the device in all (the weights and every take's state), layout's
// routed experts per layer and the dense tensors the host tier moves to
// host memory (SparseBytes). The caller adds the device's and the host's
// memory.
func TierModel(cfg *drama3.Config, layout *WeightLayout, modelBytes int64) TierInput {
	in := TierInput{ModelBytes: modelBytes, TopK: cfg.Text.NumExpertsPerTok, HostDense: layout.SparseBytes}
	for _, x := range layout.Experts {
		in.LayerExperts = append(in.LayerExperts, x.SpanBytes())
	}
	if len(layout.Experts) > 0 {
		in.ExpertBytes = layout.Experts[0].ExpertBytes()
		in.Experts = layout.Experts[0].Experts
	}
	return in
}

// DefaultPrefixCacheBytes is the device memory voice prefix snapshots may
// hold when FramesOptions.PrefixCacheBytes is 0 (frame_prefix_cuda.go)
// [assumption: a few voices of a 30 s reference at full geometry,
// docs/MODEL.md "Voice prefix cache"].
const DefaultPrefixCacheBytes = 512 << 20

// AutoVoiceCacheShare and MaxAutoVoiceCache size the voice cache of a load
// that sets none (AutoVoiceCache) [assumption: docs/MODEL.md "Voice prefix
// cache"].
const (
	AutoVoiceCacheShare = 8
	MaxAutoVoiceCache   = 8 << 30
)

// AutoVoiceCache is the voice cache a load that sets no size asks for with
// room bytes left for it: on the device beside the model where every
// weight is there, under the host tier in host memory beside the pinned
// weights and the reserve. An eighth of the room, at least
// DefaultPrefixCacheBytes, at most MaxAutoVoiceCache. A large card then
// holds a cast of long voices together (on the H200, about 100 GiB left
// beside the model and four takes: 8 GiB; on an 80 GB H100 about 5 GiB),
// and so does a small card's host with memory to spare (a 24 GB card in a
// 64 GB machine: about 5 GiB of pinned memory), where a voice read again
// costs most; little room gets the default, and seven eighths of the room
// stay free for the rest (the reference encoder, other programs). The
// cache allocates as voices are cached: a size it is not using holds
// nothing.
func AutoVoiceCache(room int64) int64 {
	return min(max(room/AutoVoiceCacheShare, DefaultPrefixCacheBytes), MaxAutoVoiceCache)
}
