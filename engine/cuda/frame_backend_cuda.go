//go:build cuda

package cuda

import (
	"context"
	"fmt"

	"gorgonia.org/cu"

	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// This file is the CUDA side of the frame contract (drama3.FrameBackend):
// the whole frame — the feedback row of the last frame through the backbone,
// the semantic head and its draw, the shared and residual tower layers each
// with its draw, the next feedback row — is one CUDA graph, captured at the
// first frame and replayed for every frame of every take; its codes and end
// flag come back in one copy into pinned host memory. The prompt runs
// through Backbone.Prefill and Tower.Prefill chunk by chunk, ctx checked
// between chunks (frame_prompt_cuda.go, reference frames included). Decode
// runs the GPU codec on its own stream, chunk by chunk in order (each chunk
// costs only its own frames).

// FramesOptions sizes a Frames.
type FramesOptions struct {
	// Capacity is the rows a take may reach (prompt + frames) in the
	// backbone's and the tower's caches; 0: DefaultFramesCapacity.
	Capacity int
	// DecodeChunk is the most frames one codec chunk carries; 0: 64.
	DecodeChunk int
	// Pipeline launches each frame's graph as soon as the last frame's
	// codes are read (Frame): not with teacher forcing or a logits tap.
	Pipeline bool
	// Ahead2 (with Pipeline) keeps two frames in flight: Frame launches
	// the frame after the one it returns before it waits for that one, so
	// the device goes from one frame's graph to the next without waiting
	// for the host to read the codes and launch (frame_ahead_cuda.go). A
	// take that ends has made one frame more than it keeps. Not for a take
	// slot of a TakeFrames nor under a host expert tier (its cache ticks
	// between frames). LoadFrames and NewFrames set it with Pipeline
	// unless $PROSCENIUM_GPU_FRAMES_AHEAD is 1.
	Ahead2 bool
	// Takes is the most takes LoadFrames admits memory for (0: 1): the
	// first's state comes with the load, each other's with NewTake; with
	// Batched, every take's is a slot of the one backbone and tower
	// (TakeFrames).
	Takes int
	// Batched loads the backbone and tower with Takes slots for
	// NewTakeFrames (the B-row step and tower); the Frames itself runs the
	// take of slot 0.
	Batched bool
	// PrefixCacheBytes is the device memory voice prefix snapshots may
	// hold (frame_prefix_cuda.go), admitted with the model by LoadFrames;
	// 0: DefaultPrefixCacheBytes; negative: no cache. Under a host tier
	// LoadFrames sets it to the pinned host memory the tier granted
	// (TierPlan.VoiceCacheHost), where the snapshots then live
	// (Frames.PrefixCacheInHost).
	PrefixCacheBytes int64
	// PrefixCacheAuto, with PrefixCacheBytes 0 (no size set: the worker's
	// loads), grows the cache to AutoVoiceCache of the room left for it (the
	// device's beside the model, or the host's under the host tier:
	// TierInput.VoiceCacheAuto).
	PrefixCacheAuto bool
	// Tier, when set, hears the memory tier LoadFrames chose before it
	// allocates anything (the worker says it on its log).
	Tier func(TierPlan)
	// NoDrawnTables leaves the tower's drawn-code tables out
	// (TowerOptions.NoDrawnTables): LoadFrames sets it as its tier planned
	// (TierPlan.NoDrawnTables).
	NoDrawnTables bool
	// KeepRoutes keeps the backbone's routing log (Backbone.KeepRoutes:
	// every prefill pass and step copies each layer's routing, for
	// TakeFrames.TapRoutes): debugging, two copies a layer more in each.
	KeepRoutes bool
}

// DefaultDecodeChunk is the frames the codec decodes at most at once by default.
const DefaultDecodeChunk = 64

func (o FramesOptions) withDefaults() FramesOptions {
	o.Capacity = framesCapacity(o.Capacity)
	if o.DecodeChunk == 0 {
		o.DecodeChunk = DefaultDecodeChunk
	}
	if o.PrefixCacheBytes == 0 {
		o.PrefixCacheBytes = DefaultPrefixCacheBytes
	}
	o.Takes = max(o.Takes, 1)
	if o.Pipeline && framesAheadEnv != "1" {
		o.Ahead2 = true
	}
	return o
}

// Frames is a FrameBackend on one device: one model's backbone, tower and
// codec. Calls come from one goroutine.
type Frames struct {
	d      *Device
	bb     *Backbone
	tower  *Tower
	extras *TowerExtras
	codec  *Codec // nil: Decode refuses (benchmarks of the frame alone)
	opt    FramesOptions
	// semantic and endToken bind a take's tower (NewTake); borrowed: the
	// weights and the codec belong to the Frames this one was made from.
	semantic []int
	endToken int
	borrowed bool
	// admitted is the device memory LoadFrames admitted before allocating
	// (0 when the backbone came from elsewhere).
	admitted int64

	pinned  *Block     // FrameResultBytes: the frame's codes, end flag, errors
	first   *Graph     // frame 0: tower frame on the prompt's last row
	next    *Graph     // later frames: feedback row → backbone step → tower frame
	ahead   frameAhead // Ahead2: odd frames' result buffer, graph and events
	entries []int
	spf     int

	frame    int     // frames made in this take (Frame calls that returned)
	codes    [][]int // kept frames
	fault    error   // a device error: the context may be unusable (Fault)
	forced   bool    // the control block holds forced codes
	inflight int     // frames launched and not yet read, from f.frame on (Pipeline: 1; Ahead2: 2)
	begun    bool
	closed   bool

	stream     *CodecStream
	streamNext int           // the frame the stream decodes next
	decoding   *CodecPending // the chunk DecodeStart put on the stream
	decoded    *[]float32    // the chunk DecodeStart decoded at once

	tap func(frame, codebook int, logits []float32)
	// promptRoutes receives each prompt row's routing as BeginPrompt's
	// passes make it (the backbone's routing log; nil: not read).
	promptRoutes func(row int, layers []StepRoute)

	prefixes   *drama3.PrefixCache // voice prefix snapshots; nil: none
	lastPrefix drama3.PrefixOutcome
	// lastSplit: the last prompt ran its voice prefix's last pass and its
	// script as one split pass (frame_prompt_split_cuda.go).
	lastSplit bool

	// inSet: a take slot of a TakeFrames (frame_takes_cuda.go): bb and the
	// tower's slot are shared with the set's other takes, slot is its own.
	inSet bool
	slot  int
}

// Frames is not a drama3.StageTimer: its frame is one graph, so the loop's
// own "frame" time (the graph and its one copy back) is the figure; the
// backbone step's share is measured apart (Backbone.TimeSteps, bench-take).
var (
	_ drama3.FrameBackend  = (*Frames)(nil)
	_ drama3.LogitsTap     = (*Frames)(nil)
	_ drama3.AsyncDecoder  = (*Frames)(nil)
	_ drama3.DecodeReadier = (*Frames)(nil)
)

// LoadFrames builds the GPU frames from a checkpoint opened by
// drama3.LoadEngine (its tokenizer resolves the semantic and end-of-speech
// tokens) and codec, the plan of its codec (cpu.Codec.Plan of ck.Codec,
// which the worker makes: engine/cuda does not import engine/cpu; nil: no
// codec, Decode refuses: frame comparisons and benchmarks of the frame
// alone): the exact bytes (FramesBytes, plus the codec's and
// opt.PrefixCacheBytes for cached voices) are admitted against the pool's
// cap and the device's free memory before anything is allocated; the
// weights stream into one arena (progress: bytes on the device of the
// total), the tower binds to it, the codec uploads. A failure frees
// everything allocated.
func LoadFrames(d *Device, ck *drama3.Checkpoint, codec *drama3.CodecPlan, opt FramesOptions, progress LoadProgress) (*Frames, error) {
	autoCache := opt.PrefixCacheAuto && opt.PrefixCacheBytes == 0
	opt = opt.withDefaults()
	cfg, tok := ck.Config, ck.Tokenizer
	if tok == nil {
		return nil, fmt.Errorf("gpu frames: %s was opened without its tokenizer (drama3.LoadEngine)", ck.Dir)
	}
	ids, err := drama3.SemanticTokenIDs(tok, cfg.Audio.SemanticCodebookSize)
	if err != nil {
		return nil, err
	}
	end, ok := tok.TokenID(drama3.EndOfSpeechToken)
	if !ok && ck.Weights.SemanticHead == nil {
		return nil, fmt.Errorf("tokenizer has no token %s", drama3.EndOfSpeechToken)
	}
	layout, err := LayoutWeights(ck.Weights)
	if err != nil {
		return nil, err
	}
	slots := 1
	if opt.Batched {
		slots = opt.Takes
	}
	tg, err := TowerGeometryOf(&cfg.Audio)
	if err != nil {
		return nil, err
	}
	// model is the tier's input with prefill passes of rows rows: the
	// weights, every take's states and scratch, the codec and the voice cache.
	model := func(rows int) (TierInput, *BackbonePlan, error) {
		need, plan, err := FramesPassBytes(cfg, layout, opt.Capacity, slots, rows)
		if err != nil {
			return TierInput{}, nil, err
		}
		take := need - layout.Bytes // one take's state and scratch
		if opt.Batched {
			take = 0 // in the slots already
		}
		if codec != nil {
			need += CodecBytes(codec, opt.DecodeChunk)
			take += CodecStreamBytes(codec, opt.DecodeChunk)
		}
		need += int64(opt.Takes-1) * take // the takes beside the first (NewTake; batched: their codec streams)
		in := TierModel(cfg, layout, need)
		in.VoiceCache, in.VoiceCacheAuto = max(opt.PrefixCacheBytes, 0), autoCache
		return in, plan, nil
	}
	rows, err := PrefillPassRows(cfg.Text.NumExpertsPerTok, func(rows int) (bool, error) {
		in, _, err := model(rows)
		if err != nil {
			return false, err
		}
		p, err := d.PlanTier(in)
		return err == nil && WholeOnDevice(p, in.VoiceCache), nil
	})
	if err != nil {
		return nil, err
	}
	in, plan, err := model(rows)
	if err != nil {
		return nil, err
	}
	tier, err := PlanTierTablesFirst(in, tg, d.PlanTier)
	if err != nil {
		return nil, err
	}
	opt.NoDrawnTables = tier.NoDrawnTables
	tier.PrefillRows = plan.Chunk
	// The voice cache gets what the tier granted: device memory, or under
	// the host tier pinned host memory.
	opt.PrefixCacheBytes = tier.VoiceCache
	if tier.Tier == TierHostExperts {
		opt.PrefixCacheBytes = tier.VoiceCacheHost
	}
	if opt.PrefixCacheBytes == 0 {
		opt.PrefixCacheBytes = -1
	}
	if opt.Tier != nil {
		opt.Tier(tier)
	}
	if layout, err = LayoutForTier(ck.Weights, layout, tier); err != nil {
		return nil, err
	}
	if err := d.Do(func() error { return d.Pool.Admit(tier.Device) }); err != nil {
		return nil, err
	}
	w, err := d.LoadWeights(ck.Index, ck.Weights, layout, progress)
	if err != nil {
		return nil, err
	}
	w.Tier = tier
	bb, err := NewBackbone(d, w, plan)
	if err != nil {
		w.Free(d)
		return nil, err
	}
	var gc *Codec
	if codec != nil {
		if gc, err = NewCodec(d, codec); err != nil {
			bb.Close()
			return nil, err
		}
	}
	f, err := NewFrames(d, bb, gc, ids, end, opt)
	if err != nil {
		return nil, err // NewFrames freed bb and codec
	}
	f.admitted = tier.Device
	return f, nil
}

// CodecBytes bounds the device memory of codec p on the GPU: its
// weights as NewCodec allocates them (exact) and a stream's state for
// chunks of maxChunk frames, estimated from the widest stage. It is an
// upper bound, for admission.
func CodecBytes(p *drama3.CodecPlan, maxChunk int) int64 {
	weights, stream := codecBytes(p, maxChunk)
	return weights + stream
}

// CodecStreamBytes bounds one codec stream's share of CodecBytes: what each
// take beside the first adds (its own stream over the shared weights).
func CodecStreamBytes(p *drama3.CodecPlan, maxChunk int) int64 {
	_, stream := codecBytes(p, maxChunk)
	return stream
}

// codecBytes is CodecBytes in two parts. The weights are what NewCodec
// allocates (codec_cuda.go bind): each convolution and block projection
// packed as FP16 [npad][taps][cpad] with a float32 bias of npad, every other
// vector float32 (a Snake's α and 1/α on the convolution after it).
func codecBytes(p *drama3.CodecPlan, maxChunk int) (weightBytes, streamBytes int64) {
	var weights, widest int64
	vec := func(n int) { weights += int64(n) * 4 }
	gemm := func(out, taps, in int) {
		npad := roundUp(out, codecPadN)
		weights += int64(npad)*int64(taps)*int64(roundUp(in, codecPadK))*2 + int64(npad)*4
	}
	conv := func(c *drama3.CodecConvWeights) {
		if c != nil {
			gemm(c.Out, c.Kernel, c.In)
		}
	}
	for _, x := range append([]drama3.CodecQuantizerWeights{p.Semantic}, p.Residual...) {
		vec(len(x.Codebook) + len(x.Proj.W) + len(x.Proj.Bias) + 2) // and its offset and size
	}
	snake := 0
	up := int64(1)
	for _, s := range p.Stages {
		switch s.Kind {
		case drama3.CodecStageSnake:
			snake = len(s.Alpha)
		case drama3.CodecStageBlock:
			b := s.Block
			gemm(3*b.Dim, 1, b.Dim)
			gemm(b.Dim, 1, b.Dim)
			gemm(2*b.FFN, 1, b.Dim)
			gemm(b.Dim, 1, b.FFN)
			vec(len(b.AttnNorm) + len(b.FFNNorm) + len(b.GammaAttn) + len(b.GammaFF) + len(b.RopeFreq))
		case drama3.CodecStageRMSNorm:
			vec(len(s.Norm))
		case drama3.CodecStageConv, drama3.CodecStageTransConv:
			conv(s.Conv)
			vec(2 * snake)
			snake = 0
		case drama3.CodecStageConvNeXt:
			x := s.ConvNeXt
			conv(&x.PW1)
			conv(&x.PW2)
			vec(len(x.DW) + len(x.DWBias) + len(x.NormW) + len(x.NormB) + len(x.Gamma))
		case drama3.CodecStageResidual:
			conv(s.Conv)
			conv(s.Conv2)
			vec(2*len(s.Alpha) + 2*roundUp(s.Conv.Out, codecPadN))
		}
		if s.Up > 0 {
			up *= int64(s.Up)
		}
		widest = max(widest, up*int64(max(s.Channels, 1)))
	}
	// Ping-pong float32 buffers, FP16 copies and histories: a few times the
	// widest stage's rows per chunk.
	return weights, 8*widest*int64(maxChunk+16)*4 + 64<<20
}

// NewFrames builds the frame backend over a loaded backbone (its arena holds
// the tower's and heads' weights too) and codec (nil: no Decode). It owns
// both from now on (Close frees them), also when it fails.
func NewFrames(d *Device, bb *Backbone, codec *Codec, semanticTokens []int, endToken int, opt FramesOptions) (*Frames, error) {
	opt = opt.withDefaults()
	f := &Frames{d: d, bb: bb, codec: codec, opt: opt, semantic: semanticTokens, endToken: endToken}
	if opt.PrefixCacheBytes > 0 {
		f.prefixes = drama3.NewPrefixCache(opt.PrefixCacheBytes)
	}
	if err := f.build(); err != nil {
		return nil, err
	}
	return f, nil
}

// build binds the tower and allocates the take's state over f.bb's
// weights; on failure it closes f.
func (f *Frames) build() error {
	d, bb, codec, opt := f.d, f.bb, f.codec, f.opt
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	if opt.KeepRoutes {
		if err := bb.KeepRoutes(); err != nil {
			return err
		}
	}
	tw, extras, err := BindTower(d, bb.W, f.semantic, f.endToken)
	if err != nil {
		return err
	}
	f.extras = extras
	takes := 1
	if opt.Batched && !f.borrowed { // the slots of a TakeFrames
		takes = min(opt.Takes, TowerMaxTakes)
	}
	if f.tower, err = NewTower(d, tw, TowerOptions{MaxRows: min(opt.Capacity, TowerMaxRows), Takes: takes, NoDrawnTables: opt.NoDrawnTables}); err != nil {
		return err
	}
	if f.pinned, err = d.AllocPinned(FrameResultBytes); err != nil {
		return err
	}
	if opt.Ahead2 {
		if err := f.ahead.alloc(d); err != nil {
			return err
		}
	}
	f.entries = append([]int(nil), tw.Geometry.Entries...)
	if codec != nil {
		f.spf = codec.Geometry().SamplesPerFrame
		if n := codec.Geometry().Codebooks(); n != len(f.entries) {
			return fmt.Errorf("cuda frames: the codec reads %d codebooks, the model makes %d", n, len(f.entries))
		}
	}
	ok = true
	return nil
}

// CodebookEntries implements drama3.FrameBackend.
func (f *Frames) CodebookEntries() []int { return f.entries }

// SamplesPerFrame implements drama3.FrameBackend.
func (f *Frames) SamplesPerFrame() int { return f.spf }

// TapLogits implements drama3.LogitsTap: the logits are read back after
// each frame (a synchronisation per frame; debugging only).
func (f *Frames) TapLogits(tap func(frame, codebook int, logits []float32)) { f.tap = tap }

// Backbone and Tower are the parts (benchmarks, drivers).
func (f *Frames) Backbone() *Backbone { return f.bb }
func (f *Frames) Tower() *Tower       { return f.tower }

// Admitted is the device memory the load admitted before it allocated
// (FramesBytes and CodecBytes, less the experts a host tier keeps in host
// memory): the budget the peak must stay within. 0 for Frames made by
// NewFrames from parts.
func (f *Frames) Admitted() int64 { return f.admitted }

// Tier is where the load put the model's bytes (PlanTier).
func (f *Frames) Tier() TierPlan { return f.bb.W.Tier }

// PrefixCacheInHost says whether the voice cache's snapshots live in pinned
// host memory rather than on the device: under a host tier, where each
// device byte goes to experts.
func (f *Frames) PrefixCacheInHost() bool { return f.Tier().Tier == TierHostExperts }

// ExpertCache is the expert cache's counts since the load (zero without one).
func (f *Frames) ExpertCache() ExpertCacheStats { return f.bb.W.Cache.Stats() }

// Begin implements drama3.FrameBackend: BeginPrompt of a prompt of text
// rows (frame_prompt_cuda.go).
func (f *Frames) Begin(ctx context.Context, prompt []int, s sampling.Settings, seed uint64) error {
	return f.BeginPrompt(ctx, drama3.TextPrompt(prompt), s, seed)
}

// Frame implements drama3.FrameBackend. With Pipeline on, the next frame's
// graph is launched as soon as this frame's codes are read (it needs them
// only on the device, in the feedback row), so the device works while the
// host runs the loop and the codec: the next Frame call only waits for it.
func (f *Frames) Frame(codes, forced []int) (bool, error) {
	if !f.begun {
		return false, fmt.Errorf("cuda frames: Frame before Begin")
	}
	if len(codes) != len(f.entries) {
		return false, fmt.Errorf("cuda frames: %d codes for %d codebooks", len(codes), len(f.entries))
	}
	if f.inflight > 0 && forced != nil {
		return false, fmt.Errorf("cuda frames: frame %d was launched ahead (pipeline) and cannot be teacher-forced; switch the pipeline off before Begin", f.frame)
	}
	if f.inflight == 0 {
		if forced != nil || f.forced {
			if err := f.tower.Force(forced); err != nil {
				return false, err
			}
			f.forced = forced != nil
		}
		if err := f.launch(); err != nil {
			return false, err
		}
		f.inflight = 1
	}
	if f.inflight == 1 && f.aheadOn() && forced == nil && !f.forced && f.bb.pos < f.bb.Plan.Capacity {
		if err := f.launchFrame(f.frame + 1); err != nil {
			return false, err
		}
		f.inflight = 2
	}
	if err := f.waitFrame(f.frame); err != nil {
		f.inflight = 0
		f.begun = false // the device state is undefined: the next take starts over
		f.fault = err
		return false, err
	}
	f.inflight--
	res := f.tower.ReadResult(f.resultBuffer(f.frame))
	if err := res.Err(); err != nil {
		f.begun = false
		return false, fmt.Errorf("cuda frames: frame %d: %w", f.frame, err)
	}
	if f.tap != nil {
		if err := f.tapLogits(); err != nil {
			return false, err
		}
	}
	f.frame++
	if res.End {
		return true, nil
	}
	copy(codes, res.Codes)
	f.codes = append(f.codes, append([]int(nil), res.Codes...))
	if f.inflight == 0 && f.opt.Pipeline && forced == nil && f.tap == nil && f.bb.pos < f.bb.Plan.Capacity {
		if err := f.launch(); err != nil {
			return false, err
		}
		f.inflight = 1
	}
	return false, nil
}

// launch enqueues frame f.frame's graph (captured at its first use) and
// returns without waiting; the result lands in pinned memory.
func (f *Frames) launch() error { return f.launchFrame(f.frame) }

// launchFrame enqueues frame k's graph, k = f.frame or (Ahead2) the one
// after it: its result goes to resultBuffer(k) and, under Ahead2, the
// stream records the frame's event when it has passed it.
func (f *Frames) launchFrame(k int) error {
	step := k > 0
	if step && f.bb.pos >= f.bb.Plan.Capacity {
		return fmt.Errorf("cuda frames: frame %d would pass the context limit of %d rows", k, f.bb.Plan.Capacity)
	}
	err := f.d.Run(func(q *Queue) error {
		g := &f.first
		if step {
			g = f.stepGraph(k)
		}
		if *g == nil {
			pinned := f.resultBuffer(k)
			captured, err := q.Capture(func(q *Queue) error { return f.enqueueFrame(q, step, pinned) })
			if err != nil {
				return fmt.Errorf("cuda frames: capturing the frame graph: %w", err)
			}
			*g = captured
		}
		if err := q.LaunchGraph(*g); err != nil {
			return err
		}
		if err := f.ahead.record(q, k); err != nil {
			return err
		}
		return f.bb.W.Cache.tick(q)
	})
	if err != nil {
		f.begun = false
		f.fault = err
		return err
	}
	if step {
		f.bb.pos++
	}
	return nil
}

// FrameLaunches is the kernel launches of a frame after the first (its
// captured graph: the backbone step, the tower, heads and draws; 0 before
// the second frame captures it).
func (f *Frames) FrameLaunches() int {
	if f.next == nil {
		return 0
	}
	return f.next.Kernels()
}

// SetPipeline switches launching the next frame ahead on or off (between
// takes: before Begin).
func (f *Frames) SetPipeline(on bool) { f.opt.Pipeline = on }

// settle waits for a frame launched ahead (Begin, Close).
func (f *Frames) settle() error {
	if f.inflight == 0 {
		return nil
	}
	f.inflight = 0
	if err := f.d.Sync(); err != nil {
		f.fault = err
		return err
	}
	return nil
}

// Fault is the device error a frame met, nil when none: after one the CUDA
// context may be unusable (errors such as an illegal address are sticky),
// so the worker ends and the next take starts a fresh one.
func (f *Frames) Fault() error { return f.fault }

// enqueueFrame is the frame graph's content: withStep puts the feedback row
// of the last frame through the backbone first (frames after the first).
func (f *Frames) enqueueFrame(q *Queue, withStep bool, pinned *Block) error {
	b := f.bb
	if withStep {
		H := int64(b.Plan.H)
		fb := f.tower.FeedbackRow()
		if err := cu.MemcpyDtoDAsync(cu.DevicePtr(b.work.Ptr+uintptr(b.Plan.Emb)), cu.DevicePtr(fb.Ptr), H*4, q.Stream()); err != nil {
			return err
		}
		if err := b.enqueue(q, 1, 0); err != nil {
			return err
		}
	}
	if err := f.tower.Frame(q, b.t(b.Plan.Out)); err != nil {
		return err
	}
	return f.tower.CopyResult(q, pinned)
}

// tapLogits reads every logits vector of the frame just made.
func (f *Frames) tapLogits() error {
	sem := make([]float32, f.entries[0]+1)
	if err := Download(f.d, sem, f.tower.SemanticLogits(), 0); err != nil {
		return err
	}
	f.tap(f.frame, 0, sem)
	for j := 1; j < len(f.entries); j++ {
		l := make([]float32, f.entries[j])
		if err := Download(f.d, l, f.tower.ResidualLogits(j), 0); err != nil {
			return err
		}
		f.tap(f.frame, j, l)
	}
	return nil
}

// Decode implements drama3.FrameBackend: chunks asked for in order go
// through one codec stream; any other range decodes frames [0, to) whole.
func (f *Frames) Decode(from, to int) ([]float32, error) {
	if f.codec == nil {
		return nil, fmt.Errorf("cuda frames: no codec loaded")
	}
	if from < 0 || to > len(f.codes) || from > to {
		return nil, fmt.Errorf("cuda frames: decode of frames [%d, %d) of %d", from, to, len(f.codes))
	}
	if from == to {
		return nil, nil
	}
	if from != f.streamNext {
		all, err := f.codec.Decode(f.flatCodes(0, to))
		if err != nil {
			return nil, err
		}
		return all[from*f.spf : to*f.spf], nil
	}
	if err := f.openStream(); err != nil {
		return nil, err
	}
	var pcm []float32
	for a := from; a < to; a += f.opt.DecodeChunk {
		b := min(a+f.opt.DecodeChunk, to)
		out, err := f.stream.Push(f.flatCodes(a, b))
		if err != nil {
			f.dropStream()
			return nil, err
		}
		pcm = append(pcm, out...)
		f.streamNext = b
	}
	return pcm, nil
}

// flatCodes is frames [a, b) of the take's codes, frame-major.
func (f *Frames) flatCodes(a, b int) []int32 {
	out := make([]int32, 0, (b-a)*len(f.entries))
	for _, fr := range f.codes[a:b] {
		for _, c := range fr {
			out = append(out, int32(c))
		}
	}
	return out
}

// openStream starts the take's in-order codec stream if it has none. Its
// memory comes before cached voices: while the pool refuses it, the least
// recently used voice prefix snapshot is freed (a failed NewStream frees
// what it took).
func (f *Frames) openStream() error {
	for f.stream == nil {
		s, err := f.codec.NewStream(f.opt.DecodeChunk)
		if err == nil {
			f.stream = s
			break
		}
		if !f.snapshotsOnDevice() || !f.prefixes.Evict() {
			return err
		}
	}
	return nil
}

// dropStream closes the stream after an error (the next chunk starts a
// whole decode or a fresh stream).
func (f *Frames) dropStream() {
	f.stream.Close()
	f.stream, f.streamNext, f.decoding = nil, 0, nil
}

// DecodeStart implements drama3.AsyncDecoder: the next chunk in order, of
// at most DecodeChunk frames, is enqueued on the codec's own stream and
// decodes while the next frames are made; any other range decodes at once
// (DecodeCollect returns it).
func (f *Frames) DecodeStart(from, to int) error {
	if f.decoding != nil || f.decoded != nil {
		return fmt.Errorf("cuda frames: a chunk is already in flight; collect it first")
	}
	if f.codec == nil || from != f.streamNext || to-from > f.opt.DecodeChunk || from < 0 || to > len(f.codes) || from >= to {
		pcm, err := f.Decode(from, to)
		if err != nil {
			return err
		}
		f.decoded = &pcm
		return nil
	}
	if err := f.openStream(); err != nil {
		return err
	}
	p, err := f.stream.Enqueue(f.flatCodes(from, to))
	if err != nil {
		f.dropStream()
		return err
	}
	f.decoding, f.streamNext = p, to
	return nil
}

// DecodeReady implements drama3.DecodeReadier: whether the chunk in flight
// has finished (true when there is none or it decoded at once).
func (f *Frames) DecodeReady() bool {
	return f.decoding == nil || f.decoding.Ready()
}

// DecodeCollect implements drama3.AsyncDecoder: it waits for the chunk
// DecodeStart began and returns its samples.
func (f *Frames) DecodeCollect() ([]float32, error) {
	if f.decoded != nil {
		pcm := *f.decoded
		f.decoded = nil
		return pcm, nil
	}
	if f.decoding == nil {
		return nil, fmt.Errorf("cuda frames: no chunk in flight")
	}
	p := f.decoding
	f.decoding = nil
	pcm, err := p.Wait()
	if err != nil {
		f.dropStream()
		return nil, err
	}
	return pcm, nil
}

// Close implements drama3.FrameBackend: everything the backend holds goes
// back to the pool (weights included).
func (f *Frames) Close() error {
	if f.closed {
		return nil
	}
	f.closed, f.begun = true, false
	f.settle()
	if f.prefixes != nil && !f.borrowed { // the first take's: the model's cache
		f.prefixes.Clear()
	}
	if f.stream != nil {
		f.stream.Close()
		f.stream = nil
	}
	f.d.Do(func() error {
		for _, g := range []*Graph{f.first, f.next, f.ahead.next} {
			if g != nil {
				g.Destroy()
			}
		}
		return nil
	})
	f.first, f.next, f.ahead.next = nil, nil, nil
	f.ahead.free(f.d)
	if f.tower != nil {
		f.tower.Close()
	}
	f.extras.Free(f.d)
	if f.pinned != nil {
		f.d.Free(f.pinned)
	}
	if f.codec != nil && !f.borrowed {
		f.codec.Close()
	}
	if f.bb != nil {
		f.bb.Close()
	}
	return nil
}
