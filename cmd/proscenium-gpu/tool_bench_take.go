//go:build cuda

package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/audio/pcm"
	"proscenium/engine/cpu"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// `proscenium-gpu bench-take` measures whole takes on the CUDA frame
// backend through the take loop (drama3.Generate), as the studio runs them:
// with --synthetic full, random weights made on the device at the full
// geometry and a random codec at the S2 codec's geometry (no file); with
// --model DIR, a checkpoint loaded from disk (load time and GB/s).

func init() {
	registerTool(tool{name: "bench-take", summary: "whole takes on the GPU: load, prefill, time to first audio, per-stage ms per frame, real-time factor, peak memory", run: benchTake})
}

// takeBench is bench-take's figures.
type takeBench struct {
	Device         string             `json:"device"`
	Kernels        string             `json:"kernels"`
	Numerics       string             `json:"numerics"` // the backbone's numerics policy (--numerics)
	Pipeline       bool               `json:"pipeline"`
	FramesAhead    int                `json:"frames_ahead"` // frames a take keeps in flight (2 by default; 1: $PROSCENIUM_GPU_FRAMES_AHEAD=1)
	Model          string             `json:"model"`
	LoadSeconds    float64            `json:"load_s"`
	LoadGBs        float64            `json:"load_gb_per_s,omitempty"` // stored bytes / load time (checkpoints only)
	StoredBytes    int64              `json:"stored_bytes,omitempty"`
	PromptTokens   int                `json:"prompt_tokens"`
	Takes          int                `json:"takes"`
	Frames         int                `json:"frames"` // per take (the last take's)
	Finish         string             `json:"finish"`
	PrefillMs      float64            `json:"prefill_ms"`
	FirstAudioMs   float64            `json:"time_to_first_audio_ms"`
	StageMsFrame   map[string]float64 `json:"stage_ms_per_frame"`       // frame (graph and copy back; pipelined: the wait for it) and codec, per frame made
	BackboneStepMs float64            `json:"backbone_step_ms"`         // the backbone's step graph alone
	TowerFrameMs   float64            `json:"tower_frame_ms,omitempty"` // frame − backbone step: tower, heads, draws, feedback row; absent when pipelined (not derivable then)
	ElapsedMs      float64            `json:"elapsed_ms"`
	AudioSeconds   float64            `json:"audio_s"`
	RTF            float64            `json:"real_time_factor"`
	ChunkMax       int                `json:"chunk_max_frames"` // the chunk policy's steady chunk (-chunk-max)
	SeedBase       int                `json:"seed_base"`        // the first take's seed (-seed-base)
	// TakeRTFs is every take's real-time factor after the first (the
	// warm-up), in order, and the frames each made: the run-to-run spread.
	TakeRTFs   []float64 `json:"take_real_time_factors"`
	TakeFrames []int     `json:"take_frames"`
	// TakeDigests: each of those takes' codes as codesDigest: two runs of
	// the same build and seeds (same synthetic weights) must print the same.
	TakeDigests   []string `json:"take_code_digests"`
	DeviceBytes   int64    `json:"device_bytes"`
	PeakBytes     int64    `json:"device_peak_bytes"`
	AdmittedBytes int64    `json:"device_admitted_bytes,omitempty"` // what the load admitted (checkpoints only)
	PinnedBytes   int64    `json:"pinned_bytes"`
	Fused         bool     `json:"fused_step"`     // the fused decode step ran (-fused under fast numerics)
	FrameLaunches int      `json:"frame_launches"` // kernel launches of a frame's graph after the first
	StepLaunches  int      `json:"step_launches"`  // kernel launches of the backbone's step graph
	// Batches are the rounds of B takes together (--batch), each B once.
	Batches []batchRound `json:"batches,omitempty"`
	// NearTies (-near-ties) is each batched take against itself alone.
	NearTies []nearTieTake `json:"near_ties,omitempty"`
	// RoutesLogged: every prefill pass and step copied its routing into
	// the backbone's log (-near-ties' -routes), the rounds' too.
	RoutesLogged bool `json:"routes_logged,omitempty"`
	// Batched: the rounds ran on cuda.TakeFrames (the B-row kernels), else drama3.Interleave.
	Batched bool `json:"batched,omitempty"`
	// PrefillExperts and PrefillRows: how a prefill pass ran its routed
	// experts, and its rows at most.
	PrefillExperts string `json:"prefill_experts"`
	PrefillRows    int    `json:"prefill_rows"`
	// BeginEach: the rounds began their takes one after another (-begin-each), else in one BeginMany.
	BeginEach bool `json:"begin_each,omitempty"`
	// Experts is the memory tier (engine/cuda PlanTier); BusGBs is the bus
	// bytes per frame over the step graph's time: the rate the step
	// sustained (experts in host memory only; the expert cache's measured
	// bytes of the reported take, else the placement's).
	Experts *api.ExpertTier `json:"experts"`
	BusGBs  float64         `json:"bus_gb_per_s,omitempty"`
	// LastTakeCache is the expert cache's counts over the reported take
	// alone (Experts.Cache: since the load, the warm-up takes included);
	// HotExperts says the router was zeroed (--hot-experts).
	LastTakeCache *api.ExpertCache `json:"last_take_cache,omitempty"`
	HotExperts    bool             `json:"hot_experts,omitempty"`
	// TakeCaches is the expert cache's counts over each take in turn (the
	// warm-up takes first): how the hit rate climbs.
	TakeCaches []*api.ExpertCache `json:"take_caches,omitempty"`
	// TierBudgetBytes is the device budget the tier was planned in, and
	// TierPlannedBytes what the plan put there (its estimates of the codec
	// and the takes' state included): beside PeakBytes, the slack left.
	TierBudgetBytes  int64 `json:"tier_budget_bytes,omitempty"`
	TierPlannedBytes int64 `json:"tier_planned_bytes,omitempty"`
	// NoTowerTables says the plan left the tower's eh_proj tables out
	// (cuda.PlanTierTablesFirst: a model that fits whole only without them).
	NoTowerTables bool `json:"no_tower_tables,omitempty"`
	// CodecHeldBytes is what the synthetic codec's weights took on the
	// device, CodecCountedBytes what the plan counted for them (CodecBytes
	// less a stream's): they must agree.
	CodecHeldBytes    int64 `json:"codec_held_bytes,omitempty"`
	CodecCountedBytes int64 `json:"codec_counted_bytes,omitempty"`

	// With --ref-seconds: a reference voice of that many seconds of random
	// codes; a warm-up take in another voice, then the take in this voice
	// twice, the first prefilling every row (Uncached), the second starting
	// from the voice cache (Cached). The figures above are the cached take's.
	RefSeconds      float64    `json:"ref_s,omitempty"`
	RefFrames       int        `json:"ref_frames,omitempty"`
	PromptRows      int        `json:"prompt_rows,omitempty"`
	Uncached        *voiceTake `json:"uncached,omitempty"`
	Cached          *voiceTake `json:"cached,omitempty"`
	VoiceCacheBytes int64      `json:"voice_cache_bytes,omitempty"`
}

// voiceTake is one take in a reference voice.
type voiceTake struct {
	PrefillMs     float64 `json:"prefill_ms"`
	FirstAudioMs  float64 `json:"time_to_first_audio_ms"`
	RowsPrefilled int     `json:"prefilled_rows"`
	FromCache     bool    `json:"from_cache"`
	// SplitPass: the voice prefix's last pass and the script ran as one
	// split pass (a host tier, -prefix-pass split).
	SplitPass bool `json:"split_pass,omitempty"`
	// StagedBytes is what the take's prefill copied onto the host tier's
	// stage (cuda.DeviceWeights.StagedBytes): its experts over the bus.
	StagedBytes int64 `json:"staged_bytes,omitempty"`
	// Profile (-prompt-profile): where the prefill's time went, wall ms.
	Profile *promptProfile `json:"profile,omitempty"`
}

// promptProfile is cuda.PromptTimes in ms.
type promptProfile struct {
	FeedbackMs float64 `json:"feedback_ms"`
	BackboneMs float64 `json:"backbone_ms"`
	TowerMs    float64 `json:"tower_ms"`
	Frames     int     `json:"forced_frames"`
}

func profileOf(p *cuda.PromptTimes) *promptProfile {
	if p == nil {
		return nil
	}
	return &promptProfile{FeedbackMs: ms(p.Feedback), BackboneMs: ms(p.Backbone), TowerMs: ms(p.Tower), Frames: p.Frames}
}

// batchRound is B takes begun together, stepped together until each ends:
// each take's first audio (from the round's start: the prefills of the
// takes before it included) and real-time factor, and the audio seconds
// all of them made per second of the round.
type batchRound struct {
	Batch     int     `json:"batch"`
	PrefillMs float64 `json:"prefill_ms"` // the takes' begin: one BeginMany, or every Begin
	// Profile (-prompt-profile): where the begin's time went, wall ms.
	Profile        *promptProfile `json:"profile,omitempty"`
	FirstAudioMs   []float64      `json:"time_to_first_audio_ms"`
	RTF            []float64      `json:"real_time_factor"`
	Digests        []string       `json:"code_digests"` // each take's codes (codesDigest), in the order they ended
	Frames         int            `json:"frames"`       // all takes together
	ElapsedMs      float64        `json:"elapsed_ms"`
	AudioPerSecond float64        `json:"audio_s_per_s"`
	// Where the round's loop spent its time after the begin: Steps calls of
	// TakeSet.Step (StepMs in them: the device's frames as the host waits
	// for them) and the takes' handling of their frames (TookMs: codes,
	// chunks started and collected on the codec, the takes' ends).
	Steps  int     `json:"steps"`
	StepMs float64 `json:"step_ms"`
	TookMs float64 `json:"took_ms"`
	// Decoded is false for a round whose audio was not decoded (-decode=false).
	Decoded bool `json:"decoded"`
	// NewVoice: the round's takes were in one reference voice new to the
	// voice cache (--ref-seconds); SplitPasses of the begin ran a voice
	// prefix and the scripts after it as one pass, SharedPrefix takes began
	// from a prefix another made in such a pass (cuda.JointSplits).
	NewVoice     bool `json:"new_voice,omitempty"`
	SplitPasses  int  `json:"split_passes,omitempty"`
	SharedPrefix int  `json:"shared_prefix_takes,omitempty"`

	codes map[drama3.TakeID][][]int // each take's codes (the near-tie check)
	ended map[drama3.TakeID]bool    // and whether it drew end of speech
}

// undecodedSet is a TakeSet whose takes' audio is silence made on the host:
// -decode=false, the frames' cost without the codec's work beside them (an
// attribution of the round's time; no product path runs it). It hides the
// set's asynchronous decoder, so the take loop asks Decode.
type undecodedSet struct{ drama3.TakeSet }

func (s undecodedSet) Decode(id drama3.TakeID, from, to int) ([]float32, error) {
	return make([]float32, (to-from)*s.SamplesPerFrame()), nil
}

func benchTake(args []string) error {
	fs := flag.NewFlagSet("bench-take", flag.ContinueOnError)
	synthetic := fs.String("synthetic", "", "full: random weights at the full geometry, made on the device")
	model := fs.String("model", "", "checkpoint directory (instead of --synthetic)")
	promptLen := fs.Int("prompt", 60, "prompt tokens (synthetic: random ids)")
	frames := fs.Int("frames", 200, "frames per take at most")
	takes := fs.Int("takes", 3, "takes (the first warms up; the last is reported)")
	asJSON := fs.Bool("json", false, "print JSON")
	ordinal := fs.Int("device", 0, "CUDA device ordinal")
	var numerics drama3.Numerics
	fs.Var(&numerics, "numerics", drama3.NumericsUsage)
	pipeline := fs.Bool("pipeline", true, "launch each frame's graph as soon as the last frame's codes are read")
	batchList := fs.String("batch", "", "takes together, comma-separated (1,2,4,8): a round of each after the single takes")
	prefillExperts := fs.String("prefill-experts", "auto", "how a prefill pass runs its routed experts: auto, grouped (each used expert read once a pass), gemv (a GEMV per row and expert) or rows")
	chunkMax := fs.Int("chunk-max", drama3.DefaultChunkPolicy().Max, "the chunk policy's steady chunk in frames (1, 2, 4, … up to this; at most cuda.DefaultDecodeChunk): how the codec's share of a frame depends on its chunk")
	rounds := fs.Int("rounds", 1, "-batch: rounds of each B (each printed; the run-to-run spread)")
	seedBase := fs.Int("seed-base", 1, "the first take's seed (single takes: seed-base, seed-base+1, …; a -batch round of B: seed-base … seed-base+B−1); another base picks other takes, e.g. ones that all run to -frames, so that a round stays B takes wide to its end")
	beginEach := fs.Bool("begin-each", false, "-batch rounds begin their takes one after another (Begin each), not together (TakeSet.BeginMany: the joint prefill)")
	batched := fs.Bool("batched", true, "-batch rounds on the batched kernels (cuda.TakeFrames: one B-row step and tower a frame); false: each take's frame in turn (drama3.Interleave)")
	decode := fs.Bool("decode", true, "-batch rounds decode their takes' audio; false: silence made on the host instead, to attribute a round's time to its frames and its codec (not a product figure)")
	fused := fs.Bool("fused", os.Getenv(cuda.FusedEnv) == "1", "the fused decode step under fast numerics (default: $"+cuda.FusedEnv+" = 1)")
	hot := fs.Bool("hot-experts", false, "synthetic: zero every router, so each step routes to the same top-k experts of every layer (ties go to the lowest ids): a forced hot set, the best case for the expert cache (random routers route near uniformly, the worst)")
	memCap := fs.Int64("cap", 0, "device memory cap in bytes (0: none): a model larger keeps the routed experts of its last layers in pinned host memory; one whose other weights pass it is refused")
	promptProfile := fs.Bool("prompt-profile", false, "with --ref-seconds or -batch: wait for the device after each part of a prompt and report where the prefill's time went (feedback rows, backbone, tower; a -batch round's begin)")
	nearTiesOn := fs.Bool("near-ties", false, "with -batch: after the rounds, each take of a round of B (B > 1) made together against the same seed made alone, the pipeline off and every logits vector read: where their codes part, whether the draw sat at a near-tie of the two runs' logits (fails on one that did not)")
	routesOn := fs.Bool("routes", true, "with -near-ties: log each prompt row's and step's routing (the router's logits and the experts chosen at every layer) and compare a take's alone and batched: where it parted, whether at a tie of the router (two copies a layer in every prefill pass and step graph, the rounds' too)")
	refSeconds := fs.Float64("ref-seconds", 0, "a reference voice of this many seconds (random codes): prefill and first audio uncached, then from the voice cache; with -batch every round's takes are in one voice new to the cache")
	hostStage := fs.String("host-stage", "routed", "how a prefill pass under a host tier copies a host layer's experts onto the stage: routed (only the experts its rows route to, where that carries fewer bytes: the product's way) or layer (the whole layer, or each (row, expert) pair's expert read in place; the same bits)")
	prefixPass := fs.String("prefix-pass", "split", "how a take in a voice not cached runs its voice prefix's last pass and its script under a host tier, and takes begun together in it their scripts: split (one split pass: each host layer's experts over the bus once for both, the product's way) or apart (two passes; the same bits)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var batches []int
	if *batchList != "" {
		var err error
		if batches, err = api.ParseBatches(*batchList); err != nil {
			return err
		}
	}
	if (*synthetic == "") == (*model == "") {
		return fmt.Errorf("give --synthetic full or --model DIR")
	}
	if *nearTiesOn && !slices.ContainsFunc(batches, func(b int) bool { return b > 1 }) {
		return fmt.Errorf("--near-ties needs a -batch of two takes or more")
	}
	if *synthetic != "" && *synthetic != "full" {
		return fmt.Errorf("--synthetic %q: the only geometry is full", *synthetic)
	}
	chunks := drama3.DefaultChunkPolicy()
	chunks.Max = *chunkMax
	if err := chunks.Validate(); err != nil || *chunkMax > cuda.DefaultDecodeChunk {
		return fmt.Errorf("--chunk-max %d: want 1…%d", *chunkMax, cuda.DefaultDecodeChunk)
	}
	if *promptLen < 2 || *frames < 1 || *takes < 1 || *rounds < 1 {
		return fmt.Errorf("--prompt %d (≥ 2), --frames %d, --takes %d and --rounds %d (≥ 1)", *promptLen, *frames, *takes, *rounds)
	}
	if *promptProfile {
		cuda.PromptProfile = &cuda.PromptTimes{}
	}
	if *refSeconds < 0 || *refSeconds > maxRefSeconds {
		return fmt.Errorf("--ref-seconds %g: in [0, %d]", *refSeconds, maxRefSeconds)
	}
	switch *hostStage {
	case "routed", "layer":
		cuda.StageRouted = *hostStage == "routed"
	default:
		return fmt.Errorf("--host-stage %q: routed or layer", *hostStage)
	}
	switch *prefixPass {
	case "split", "apart":
		cuda.SplitPrefix = *prefixPass == "split"
	default:
		return fmt.Errorf("--prefix-pass %q: split or apart", *prefixPass)
	}
	// The codec's frame rate bounds the reference's rows before a load (the
	// S2 codec: 2048 samples a frame).
	refFrames := int(math.Round(*refSeconds * pcm.SampleRate / 2048))
	dev, err := cuda.Open(*ordinal, *memCap, 1<<30)
	if err != nil {
		return err
	}
	dev.Numerics = numerics
	defer dev.Close()
	res := takeBench{Device: dev.Info.Name, Kernels: dev.Info.Kernels, Numerics: dev.Numerics.String(), Pipeline: *pipeline, Takes: *takes, ChunkMax: *chunkMax, SeedBase: *seedBase, StageMsFrame: map[string]float64{}}
	opt := cuda.FramesOptions{Capacity: *promptLen + refHeadRows + refFrames + *frames + 16, Pipeline: *pipeline, Takes: slices.Max(append([]int{1}, batches...))}
	opt.Batched = *batched && opt.Takes > 1
	opt.KeepRoutes = *nearTiesOn && *routesOn
	res.RoutesLogged = opt.KeepRoutes
	res.Batched = opt.Batched
	res.BeginEach = *beginEach
	var f *cuda.Frames
	var prompt []int
	// voicePrompt is the prompt of the take in a reference voice of codes
	// (--ref-seconds).
	var voicePrompt func(codes [][]int) (drama3.Prompt, error)
	start := time.Now()
	if *synthetic == "full" {
		res.Model = "synthetic full"
		cfg, err := drama3.ParseConfig(fullGeometry)
		if err != nil {
			return err
		}
		ref, err := cpu.LoadCodec(cpu.CodecRandomTensors(1, 1024, 1536, 8), drama3.CodecOptions{})
		if err != nil {
			return err
		}
		plan := ref.Plan()
		slots := 1
		if opt.Batched {
			slots = opt.Takes
		}
		bb, err := syntheticBackboneSlots(dev, cfg, opt.Capacity, slots, 1, &syntheticFrames{CodecBytes: cuda.CodecBytes(&plan, cuda.DefaultDecodeChunk),
			CodecStreamBytes: cuda.CodecStreamBytes(&plan, cuda.DefaultDecodeChunk), Takes: opt.Takes, ZeroRouters: *hot})
		if err != nil {
			return err
		}
		before := dev.Pool.Stats(cuda.DeviceMem).Used
		codec, err := cuda.NewCodec(dev, &plan)
		if err != nil {
			bb.Close()
			return err
		}
		res.CodecHeldBytes = dev.Pool.Stats(cuda.DeviceMem).Used - before
		res.CodecCountedBytes = cuda.CodecBytes(&plan, cuda.DefaultDecodeChunk) - cuda.CodecStreamBytes(&plan, cuda.DefaultDecodeChunk)
		// Random weights have no tokenizer: the semantic codes' rows are the
		// first ids, end of speech the next.
		ids := make([]int, cfg.Audio.SemanticCodebookSize)
		for i := range ids {
			ids[i] = 1000 + i
		}
		r := rand.New(rand.NewPCG(3, 4))
		for range *promptLen {
			prompt = append(prompt, r.IntN(cfg.Text.VocabSize))
		}
		// Synthetic: refHeadRows random text rows, the frames, the script.
		voicePrompt = func(codes [][]int) (drama3.Prompt, error) {
			var p drama3.Prompt
			for range refHeadRows {
				p = append(p, drama3.PromptRow{Token: r.IntN(cfg.Text.VocabSize)})
			}
			for _, c := range codes {
				p = append(p, drama3.PromptRow{Token: ids[c[0]], Codes: c})
			}
			return append(p, drama3.TextPrompt(prompt)...), nil
		}
		opt.NoDrawnTables = bb.W.Tier.NoDrawnTables // as syntheticBackboneSlots planned (as LoadFrames)
		if f, err = cuda.NewFrames(dev, bb, codec, ids, 1000+len(ids), opt); err != nil {
			return err
		}
	} else {
		res.Model = *model
		ck, err := drama3.LoadEngine(*model)
		if err != nil {
			return err
		}
		defer ck.Close()
		tok := ck.Tokenizer
		var total int64
		codec, err := codecPlan(ck.Codec)
		if err != nil {
			return err
		}
		if f, err = cuda.LoadFrames(dev, ck, codec, opt, func(done, t int64) { total = t }); err != nil {
			return err
		}
		res.StoredBytes = total
		pb, err := drama3.NewPromptBuilder(tok, drama3.PromptLimits{})
		if err != nil {
			return err
		}
		text := "This sentence is the benchmark's prompt; it is about sixty tokens long once the prompt around it is built, which is what a short line in the studio costs."
		if prompt, err = pb.DefaultVoice(text); err != nil {
			return err
		}
		voicePrompt = func(codes [][]int) (drama3.Prompt, error) {
			ref := drama3.Reference{Transcript: "The reference recording's transcript, a line or two of what the voice says in it.", Codes: codes}
			return pb.ReferenceVoice(text, []drama3.Reference{ref}, f.CodebookEntries())
		}
	}
	defer f.Close()
	f.Backbone().SetFused(*fused) // before the first take captures the frame graphs
	if f.Backbone().Experts, err = parsePrefillExperts(*prefillExperts); err != nil {
		return err
	}
	res.PrefillExperts = f.Backbone().Experts.String()
	res.PrefillRows = f.Backbone().Plan.Chunk
	res.Fused = f.Backbone().Fused && !dev.Numerics.Exact()
	res.FramesAhead = f.FramesAhead()
	if err := dev.Sync(); err != nil {
		return err
	}
	res.LoadSeconds = time.Since(start).Seconds()
	if res.StoredBytes > 0 {
		res.LoadGBs = float64(res.StoredBytes) / 1e9 / res.LoadSeconds
	}
	res.PromptTokens = len(prompt)

	var last *drama3.Result
	var newVoice func() (drama3.Prompt, error) // a reference voice of random codes (nil: none)
	if refFrames > 0 {
		r := rand.New(rand.NewPCG(5, 6))
		entries := f.CodebookEntries()
		newVoice = func() (drama3.Prompt, error) {
			codes := make([][]int, refFrames)
			for i := range codes {
				codes[i] = make([]int, len(entries))
				for c, e := range entries {
					codes[i][c] = r.IntN(e)
				}
			}
			return voicePrompt(codes)
		}
		if last, err = benchVoice(f, &res, newVoice, refFrames, *refSeconds, *frames); err != nil {
			return err
		}
		*takes = 0
	}
	res.HotExperts = *hot
	var before cuda.ExpertCacheStats
	for i := 0; i < *takes; i++ {
		if i > 0 && f.Tier().Tier == cuda.TierHostExperts {
			res.TakeCaches = append(res.TakeCaches, expertCache(f.ExpertCache().Since(before)))
		}
		before = f.ExpertCache()
		r, err := drama3.Generate(context.Background(), f, drama3.Take{Prompt: prompt,
			Sampling: benchSampling, Seed: uint64(i + *seedBase), MaxFrames: *frames, Chunks: chunks}, drama3.Listener{})
		if err != nil {
			return fmt.Errorf("take %d: %w", i+1, err)
		}
		last = r
		if audio := float64(len(r.Codes)*f.SamplesPerFrame()) / pcm.SampleRate; i > 0 && audio > 0 {
			res.TakeRTFs = append(res.TakeRTFs, r.Elapsed.Seconds()/audio)
			res.TakeFrames = append(res.TakeFrames, len(r.Codes))
			res.TakeDigests = append(res.TakeDigests, codesDigest(r.Codes))
		}
	}
	res.FrameLaunches = f.FrameLaunches()
	n := len(last.Codes)
	res.Frames, res.Finish = n, last.Reason
	res.PrefillMs = ms(last.Stages[drama3.StagePrefill])
	res.FirstAudioMs = ms(last.TimeToFirstAudio)
	res.ElapsedMs = ms(last.Elapsed)
	for k, v := range last.Stages {
		if k != drama3.StagePrefill && n > 0 {
			res.StageMsFrame[k] = ms(v) / float64(n)
		}
	}
	res.AudioSeconds = float64(n*f.SamplesPerFrame()) / pcm.SampleRate
	if res.AudioSeconds > 0 {
		res.RTF = res.ElapsedMs / 1000 / res.AudioSeconds
	}
	ps := dev.Pool.Stats(cuda.DeviceMem)
	res.DeviceBytes, res.PeakBytes = ps.Used, ps.Peak
	res.AdmittedBytes = f.Admitted()
	res.PinnedBytes = dev.Pool.Stats(cuda.PinnedMem).Used + dev.Pool.Stats(cuda.HostTierMem).Used
	res.Experts = expertTier(f.Tier(), f.ExpertCache())
	if res.Experts.Cache != nil && *takes > 0 {
		res.LastTakeCache = expertCache(f.ExpertCache().Since(before))
		res.TakeCaches = append(res.TakeCaches, res.LastTakeCache)
	}
	res.TierBudgetBytes, res.TierPlannedBytes, res.NoTowerTables = f.Tier().Budget, f.Tier().Device, f.Tier().NoDrawnTables
	// The backbone's step graph alone, after a fresh prefill.
	bb := f.Backbone()
	if err := bb.Reset(); err != nil {
		return err
	}
	rows := make([]cuda.BackboneRow, len(prompt))
	for i, id := range prompt {
		rows[i].Token = id
	}
	if _, err := bb.Prefill(rows); err != nil {
		return err
	}
	if _, err := bb.Step(cuda.BackboneRow{Token: prompt[0]}); err != nil { // captures the step graph
		return err
	}
	if res.BackboneStepMs, err = bb.TimeSteps(min(100, opt.Capacity-len(prompt)-2)); err != nil {
		return err
	}
	res.StepLaunches = bb.StepLaunches()
	if res.Experts.BusBytesPerFrame > 0 && res.BackboneStepMs > 0 {
		bus := float64(res.Experts.BusBytesPerFrame)
		if c := res.LastTakeCache; c != nil {
			bus = c.BusBytesPerFrame
		}
		res.BusGBs = bus / 1e9 / (res.BackboneStepMs / 1000)
	}
	if !*pipeline { // pipelined, a Frame call only waits for the frame launched ahead
		res.TowerFrameMs = res.StageMsFrame[drama3.StageFrame] - res.BackboneStepMs
	}
	if len(batches) > 0 {
		// One set over f for every round: its takes' state is made (and
		// their graphs captured) in a warm-up round of the largest B.
		var set drama3.TakeSet
		if opt.Batched {
			set, err = cuda.NewTakeFrames(f)
		} else {
			set, err = drama3.NewInterleave(f, func() (drama3.FrameBackend, error) { return f.NewTake() }, opt.Takes)
		}
		if err != nil {
			return err
		}
		defer set.Close() // the takes' state before f's (f.Close is then a no-op)
		if !*decode {
			set = undecodedSet{set}
		}
		// With --ref-seconds every round's takes are in a voice of their
		// own, new to the voice cache: the studio's variations of a line in
		// a voice just cloned.
		roundPrompt := func() (drama3.Prompt, error) {
			if newVoice == nil {
				return drama3.TextPrompt(prompt), nil
			}
			return newVoice()
		}
		p, err := roundPrompt()
		if err != nil {
			return err
		}
		if _, err := benchRound(set, opt.Takes, *seedBase, p, *frames, chunks, *beginEach); err != nil {
			return fmt.Errorf("warm-up round of %d takes: %w", opt.Takes, err)
		}
		for range *rounds {
			for _, b := range batches {
				if p, err = roundPrompt(); err != nil {
					return err
				}
				r, err := benchRound(set, b, *seedBase, p, *frames, chunks, *beginEach)
				if err != nil {
					return fmt.Errorf("round of %d takes: %w", b, err)
				}
				res.Batches = append(res.Batches, r)
			}
		}
		ps := dev.Pool.Stats(cuda.DeviceMem)
		res.DeviceBytes, res.PeakBytes = ps.Used, ps.Peak
		if ts, ok := set.(*cuda.TakeFrames); ok && *nearTiesOn {
			for _, b := range batches {
				if b < 2 {
					continue
				}
				found, err := nearTies(ts, f, *pipeline, opt.KeepRoutes, b, *seedBase, prompt, *frames, chunks, *beginEach)
				if err != nil {
					return fmt.Errorf("near-ties, %d takes: %w", b, err)
				}
				res.NearTies = append(res.NearTies, found...)
			}
		} else if *nearTiesOn {
			return fmt.Errorf("--near-ties needs -batch rounds on the batched kernels, decoded")
		}
	}

	if *asJSON {
		if err := printJSON(res); err != nil {
			return err
		}
		return nearTiesVerdict(res.NearTies, numerics.Exact())
	}
	fmt.Printf("device            %s (kernels %s), pipeline %v (%d frames in flight), numerics %s, chunks up to %d frames\n", res.Device, res.Kernels, res.Pipeline, res.FramesAhead, res.Numerics, res.ChunkMax)
	fmt.Printf("model             %s, loaded in %.2f s", res.Model, res.LoadSeconds)
	if res.LoadGBs > 0 {
		fmt.Printf(" (%.2f GB/s of %.2f GB)", res.LoadGBs, float64(res.StoredBytes)/1e9)
	}
	fmt.Println()
	fmt.Printf("prompt            %d tokens, prefill %.2f ms (passes of up to %d rows, experts: %s)\n", res.PromptTokens, res.PrefillMs, res.PrefillRows, res.PrefillExperts)
	if res.Uncached != nil {
		fmt.Printf("reference voice   %.1f s = %d frames; %d prompt rows in all\n", res.RefSeconds, res.RefFrames, res.PromptRows)
		for _, v := range []struct {
			name string
			t    *voiceTake
		}{{"  uncached", res.Uncached}, {"  from the cache", res.Cached}} {
			split := ""
			if v.t.SplitPass {
				split = ", the prefix's last pass and the script as one split pass"
			}
			if v.t.StagedBytes > 0 {
				split += fmt.Sprintf(", %.2f GB of experts staged over the bus", float64(v.t.StagedBytes)/1e9)
			}
			fmt.Printf("%-17s prefill %.2f ms (%d rows%s), first audio %.2f ms\n", v.name, v.t.PrefillMs, v.t.RowsPrefilled, split, v.t.FirstAudioMs)
			if pr := v.t.Profile; pr != nil {
				fmt.Printf("%-17s feedback rows %.2f ms, backbone %.2f ms, tower %.2f ms (%d forced frames)\n", "", pr.FeedbackMs, pr.BackboneMs, pr.TowerMs, pr.Frames)
			}
		}
		fmt.Printf("  voice cache     %.1f MiB\n", float64(res.VoiceCacheBytes)/(1<<20))
	}
	fmt.Printf("take              %d frames (%s), %.2f s of audio in %.1f ms: real-time factor %.4f\n", res.Frames, res.Finish, res.AudioSeconds, res.ElapsedMs, res.RTF)
	if len(res.TakeRTFs) > 1 {
		fmt.Printf("takes after the first: real-time factor")
		for i, v := range res.TakeRTFs {
			fmt.Printf(" %.4f (%d)", v, res.TakeFrames[i])
		}
		fmt.Printf("; median %.4f\n", median(res.TakeRTFs))
		fmt.Printf("takes' codes      %s\n", strings.Join(res.TakeDigests, " "))
	}
	fmt.Printf("first audio       %.2f ms\n", res.FirstAudioMs)
	keys := make([]string, 0, len(res.StageMsFrame))
	for k := range res.StageMsFrame {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %-15s %.3f ms per frame\n", k, res.StageMsFrame[k])
	}
	fmt.Printf("launches          %d per frame after the first, %d per backbone step (fused step %v)\n", res.FrameLaunches, res.StepLaunches, res.Fused)
	fmt.Printf("  backbone step   %.3f ms (graph alone)", res.BackboneStepMs)
	if !res.Pipeline {
		fmt.Printf("; tower, heads, draws, feedback ≈ %.3f ms", res.TowerFrameMs)
	}
	fmt.Println()
	fmt.Printf("memory            device %.2f GiB (peak %.2f GiB), pinned %.1f MiB\n", gib(res.DeviceBytes), gib(res.PeakBytes), float64(res.PinnedBytes)/(1<<20))
	if len(res.Batches) > 0 {
		how := "each take's frame in turn (drama3.Interleave)"
		if res.Batched {
			how = "one B-row step and tower a frame for every take (cuda.TakeFrames)"
		}
		begin := "begun together (TakeSet.BeginMany)"
		if res.BeginEach {
			begin = "begun one after another"
		}
		fmt.Printf("batches           %s; takes %s; seeds from %d\n", how, begin, res.SeedBase)
	}
	for _, r := range res.Batches {
		fmt.Printf("batch %d           %.3f audio s per s (%d frames in %.1f ms); begin %.1f ms", r.Batch, r.AudioPerSecond, r.Frames, r.ElapsedMs, r.PrefillMs)
		if pr := r.Profile; pr != nil {
			fmt.Printf(" (backbone %.1f, tower %.1f)", pr.BackboneMs, pr.TowerMs)
		}
		if r.NewVoice {
			fmt.Printf(" in a new voice (%d split passes, %d takes sharing its prefix)", r.SplitPasses, r.SharedPrefix)
		}
		fmt.Printf("; first audio")
		for _, v := range r.FirstAudioMs {
			fmt.Printf(" %.1f", v)
		}
		fmt.Printf(" ms; real-time factor")
		for _, v := range r.RTF {
			fmt.Printf(" %.4f", v)
		}
		fmt.Printf("; codes %s\n", strings.Join(r.Digests, " "))
		if r.Steps > 0 {
			how := ""
			if !r.Decoded {
				how = " (audio not decoded: -decode=false)"
			}
			fmt.Printf("  loop            %d steps: %.3f ms a step in Step, %.3f in the takes' handling%s\n", r.Steps, r.StepMs/float64(r.Steps), r.TookMs/float64(r.Steps), how)
		}
	}
	if x := res.Experts; x.HostBytes == 0 {
		fmt.Printf("experts           %s: %.2f GiB of routed experts on the device\n", x.Tier, gib(x.DeviceBytes))
	} else {
		fmt.Printf("experts           %s: %.2f GiB on the device (%d of %d layers), %.2f GiB pinned in host memory\n",
			x.Tier, gib(x.DeviceBytes), x.DeviceLayers, x.Layers, gib(x.HostBytes))
		fmt.Printf("  device hit rate %.1f %% of expert reads as placed at the load (the share of layers on the device)\n", 100*x.HitRate)
		fmt.Printf("  bus             %.3f GB per frame as placed (top-%d experts of each host layer, read once); %.1f GB/s measured over the %.3f ms step graph\n",
			float64(x.BusBytesPerFrame)/1e9, f.Backbone().Plan.K, res.BusGBs, res.BackboneStepMs)
		for i, c := range res.TakeCaches {
			fmt.Printf("  take %d          hit rate %.1f %%, %d promotions, bus %.3f GB per frame\n", i+1, 100*c.HitRate, c.Promotions, c.BusBytesPerFrame/1e9)
		}
		if c := res.LastTakeCache; c != nil {
			fmt.Printf("  expert cache    last take: measured hit rate %.1f %% (%d hits, %d misses), %d promotions, %d evictions, bus %.3f GB per frame (misses' reads and promotions' copies); %d of %d experts resident, %d slots\n",
				100*c.HitRate, c.Hits, c.Misses, c.Promotions, c.Evictions, c.BusBytesPerFrame/1e9, c.Resident, c.Total, c.Slots)
		}
		if c := res.Experts.Cache; c != nil {
			fmt.Printf("  expert cache    since the load: hit rate %.1f %% over %d frames, %d promotions, bus %.3f GB per frame\n",
				100*c.HitRate, c.Frames, c.Promotions, c.BusBytesPerFrame/1e9)
		}
		switch {
		case res.HotExperts:
			fmt.Println("  (--hot-experts: every router zeroed, each step routes to the same experts: a forced hot set, the best case for the cache)")
		case res.Model == "synthetic full":
			fmt.Println("  (random weights route near uniformly: the worst case for any expert cache)")
		}
		tables := "the tower's eh_proj tables on the device"
		if res.NoTowerTables {
			tables = "the tower's eh_proj tables left out"
		}
		fmt.Printf("  tier plan       %.2f GiB planned on the device (estimates of the codec and takes included) of a %.2f GiB budget, prefill passes of %d rows, %s; the peak held %.2f GiB\n",
			gib(res.TierPlannedBytes), gib(res.TierBudgetBytes), res.PrefillRows, tables, gib(res.PeakBytes))
	}
	if res.CodecHeldBytes > 0 {
		fmt.Printf("codec             weights %.1f MiB held, %.1f MiB counted by the tier plan\n", float64(res.CodecHeldBytes)/(1<<20), float64(res.CodecCountedBytes)/(1<<20))
	}
	if res.AdmittedBytes > 0 {
		within := "within it"
		if res.PeakBytes > res.AdmittedBytes {
			within = "OVER it"
		}
		fmt.Printf("admitted          %.2f GiB before the load: the peak is %.1f %% of it, %s\n", gib(res.AdmittedBytes), 100*float64(res.PeakBytes)/float64(res.AdmittedBytes), within)
	}
	for _, r := range res.NearTies {
		fmt.Println(r)
	}
	if res.RoutesLogged {
		fmt.Println("routes            every prefill pass and step logged its routing (-routes): the rounds' timings include two copies a layer")
	}
	if len(res.NearTies) > 0 {
		fmt.Println(nearTiesTally(res.NearTies))
	}
	return nearTiesVerdict(res.NearTies, numerics.Exact())
}

// benchRound runs b takes of prompt on set together (seeds base…base+b−1; every take
// begins, in one BeginMany or with each its own Begin, then one step for all
// live ones until each ends) through the take loop, as engine/take's
// scheduler does when b requests arrive at once.
func benchRound(set drama3.TakeSet, b, base int, prompt drama3.Prompt, frames int, chunks drama3.ChunkPolicy, each bool) (batchRound, error) {
	_, undecoded := set.(undecodedSet)
	r := batchRound{Batch: b, Decoded: !undecoded, NewVoice: prompt.VoicePrefix() > 0, codes: map[drama3.TakeID][][]int{}, ended: map[drama3.TakeID]bool{}}
	var rows drama3.Prompt
	if prompt.AudioRows() > 0 {
		rows = prompt
	}
	ts, _ := set.(*cuda.TakeFrames)
	var splits cuda.JointSplits
	if ts != nil {
		splits = ts.Splits()
	}
	if cuda.PromptProfile != nil {
		*cuda.PromptProfile = cuda.PromptTimes{}
	}
	start := time.Now()
	runs := make([]*drama3.TakeRun, b)
	for i := range runs {
		run, err := drama3.NewTakeRun(set, drama3.TakeID(i), drama3.Take{Prompt: prompt.Tokens(), Rows: rows,
			Sampling: benchSampling, Seed: uint64(i + base), MaxFrames: frames, Start: start, Chunks: chunks}, drama3.Listener{})
		if err != nil {
			return r, err
		}
		if each {
			t0 := time.Now()
			if _, err := run.Prefill(context.Background()); err != nil {
				return r, err
			}
			r.PrefillMs += ms(time.Since(t0))
		}
		runs[i] = run
	}
	if !each {
		t0 := time.Now()
		ctxs := make([]context.Context, b)
		for i := range ctxs {
			ctxs[i] = context.Background()
		}
		_, errs := drama3.PrefillMany(set, runs, ctxs)
		if err := errors.Join(errs...); err != nil {
			return r, err
		}
		r.PrefillMs = ms(time.Since(t0))
	}
	r.Profile = profileOf(cuda.PromptProfile)
	if ts != nil {
		now := ts.Splits()
		r.SplitPasses, r.SharedPrefix = now.Passes-splits.Passes, now.Shared-splits.Shared
	}
	var audioS float64
	finish := func(run *drama3.TakeRun) error { // as soon as the take ends: its elapsed time is its own
		res, err := run.Finish()
		if err != nil {
			return err
		}
		a := float64(len(res.Codes)*set.SamplesPerFrame()) / pcm.SampleRate
		audioS += a
		r.Frames += len(res.Codes)
		r.FirstAudioMs = append(r.FirstAudioMs, ms(res.TimeToFirstAudio))
		rtf := 0.0
		if a > 0 {
			rtf = res.Elapsed.Seconds() / a
		}
		r.RTF = append(r.RTF, rtf)
		r.Digests = append(r.Digests, codesDigest(res.Codes))
		r.codes[run.ID()], r.ended[run.ID()] = res.Codes, res.Reason == drama3.FinishStop
		return nil
	}
	live := slices.Clone(runs)
	for len(live) > 0 {
		step := make([]drama3.TakeFrame, 0, len(live))
		var next []*drama3.TakeRun
		for _, run := range live {
			if !run.Due(context.Background()) {
				if err := finish(run); err != nil {
					return r, err
				}
				continue
			}
			step = append(step, run.NextFrame())
			next = append(next, run)
		}
		if len(next) == 0 {
			break
		}
		t0 := time.Now()
		if err := set.Step(step); err != nil {
			return r, err
		}
		d := time.Since(t0)
		r.Steps++
		r.StepMs += ms(d)
		t1 := time.Now()
		live = live[:0]
		for i, run := range next {
			ok, err := run.Took(step[i], d, len(step))
			if err != nil {
				return r, err
			}
			if !ok {
				if err := finish(run); err != nil {
					return r, err
				}
				continue
			}
			live = append(live, run)
		}
		r.TookMs += ms(time.Since(t1))
	}
	el := time.Since(start)
	r.ElapsedMs = ms(el)
	r.AudioPerSecond = audioS / el.Seconds()
	return r, nil
}

// maxRefSeconds bounds --ref-seconds (the studio takes references of 2-30 s).
const maxRefSeconds = 120

// refHeadRows is the text rows before a synthetic reference's frames (the
// system text and transcript of a short line).
const refHeadRows = 40

// benchVoice runs the takes of --ref-seconds: a warm-up take in another
// voice (graphs captured, caches warm), then the take in a voice of
// refFrames random frames twice: uncached, then from the voice cache. It
// returns the cached take's result and fills res.
func benchVoice(f *cuda.Frames, res *takeBench, voice func() (drama3.Prompt, error), refFrames int, seconds float64, frames int) (*drama3.Result, error) {
	take := func(p drama3.Prompt) (*drama3.Result, *voiceTake, error) {
		var prof *cuda.PromptTimes
		if cuda.PromptProfile != nil {
			*cuda.PromptProfile = cuda.PromptTimes{}
		}
		staged := f.Backbone().W.StagedBytes
		out, err := drama3.Generate(context.Background(), f, drama3.Take{Prompt: p.Tokens(), Rows: p,
			Sampling: benchSampling, Seed: 1, MaxFrames: frames}, drama3.Listener{})
		if err != nil {
			return nil, nil, err
		}
		last := f.LastPrefix()
		if cuda.PromptProfile != nil {
			p := *cuda.PromptProfile
			prof = &p
		}
		return out, &voiceTake{PrefillMs: ms(out.Stages[drama3.StagePrefill]), FirstAudioMs: ms(out.TimeToFirstAudio),
			RowsPrefilled: last.Prefilled, FromCache: last.Restored, SplitPass: f.LastSplit(),
			StagedBytes: f.Backbone().W.StagedBytes - staged, Profile: profileOf(prof)}, nil
	}
	warm, err := voice()
	if err != nil {
		return nil, err
	}
	if _, _, err := take(warm); err != nil {
		return nil, fmt.Errorf("warm-up take: %w", err)
	}
	p, err := voice()
	if err != nil {
		return nil, err
	}
	_, uncached, err := take(p)
	if err != nil {
		return nil, fmt.Errorf("uncached take: %w", err)
	}
	last, cached, err := take(p)
	if err != nil {
		return nil, fmt.Errorf("cached take: %w", err)
	}
	if uncached.FromCache || !cached.FromCache {
		return nil, fmt.Errorf("the voice cache did not take the voice (uncached take from the cache: %v, second take: %v)", uncached.FromCache, cached.FromCache)
	}
	res.RefSeconds, res.RefFrames, res.PromptRows = seconds, refFrames, len(p)
	res.Uncached, res.Cached = uncached, cached
	res.VoiceCacheBytes = f.PrefixCache().Stats().Bytes
	res.Takes = 3
	return last, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func gib(b int64) float64        { return float64(b) / (1 << 30) }

// parsePrefillExperts is -prefill-experts' path.
func parsePrefillExperts(name string) (cuda.ExpertPath, error) {
	switch name {
	case "auto":
		return cuda.ExpertsAuto, nil
	case "grouped":
		return cuda.ExpertsGrouped, nil
	case "gemv":
		return cuda.ExpertsGEMV, nil
	case "rows":
		return cuda.ExpertsRows, nil
	}
	return 0, fmt.Errorf("-prefill-experts %q: auto, grouped, gemv or rows", name)
}

// codesDigest is a short hash (FNV-1a, 32 bits) of a take's codes, frame by
// frame: takes of the same seed, settings and weights print the same digest
// from any process, so a benchmark can show that two runs made the same
// audio (and that an A/B compared the same work).
func codesDigest(codes [][]int) string {
	h := fnv.New32a()
	var b [4]byte
	for _, frame := range codes {
		for _, c := range frame {
			binary.LittleEndian.PutUint32(b[:], uint32(c))
			h.Write(b[:])
		}
	}
	return fmt.Sprintf("%08x", h.Sum32())
}
