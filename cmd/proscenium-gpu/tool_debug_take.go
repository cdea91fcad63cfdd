//go:build cuda

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"proscenium/engine/api"
	"proscenium/engine/cpu"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// `proscenium-gpu debug-take` runs takes on the CUDA frame backend and the
// CPU reference side by side (`proscenium debug take --backend cuda` relays
// it): teacher-forced frames, whose every logits vector is compared with the
// CPU's, and free-running takes per seed, whose codes are compared, each
// divergence logged with the logits margin behind it and classified
// (cpu.Explainer): a draw near-tie (the logits within the tolerance and the
// draw within their difference of a boundary, drama3.NearTie), a routing
// near-tie (in the backbone run that made the first frame whose logits left
// the tolerance, or the diverging frame's, a row's top-k router margin lay
// within the router logits' rounding error: the GPU chose the other expert;
// with -confirm-routing, the default, only where the CPU replayed with the
// two experts swapped makes the GPU's codes), or unexplained. After the
// report it prints a summary line on stderr and fails (exit status 1,
// naming each) on a mismatch: a forced code not echoed, a logits vector
// past the tolerance, a pipelined take unlike the same take frame by frame,
// an unexplained divergence, and under the exact numerics policy semantic
// logits without the CPU's bits (the backbone and semantic head are under
// the contract; the tower is not).

func init() {
	registerTool(tool{name: "debug-take", summary: "CUDA takes against the CPU reference: teacher-forced logits, free-running codes per seed", run: runDebugTake})
}

// takeReport is debug-take's JSON.
type takeReport struct {
	Model        string       `json:"model"`
	Device       string       `json:"device"`
	Numerics     string       `json:"numerics"` // the GPU's numerics policy (--numerics)
	PromptTokens int          `json:"prompt_tokens"`
	Forced       forcedReport `json:"teacher_forced"`
	Free         freeReport   `json:"free_running"`
	// Baseline: the same free-running takes of the CPU reference with its
	// weights Rounded (cpu.RoundingNoise) by seeds 1…N, against the CPU's
	// own: the agreement float32 rounding alone leaves, which no backend
	// summing in another order can be expected to beat.
	Baseline []baselineTrial `json:"cpu_rounding_baseline"`
	// With --cap: the device memory cap, the memory tier the load chose
	// under it, and the model's side of that decision (cuda.ModelTierInput
	// at this context, no codec: what the load planned with), from which
	// caps for each tier follow.
	Cap       int64           `json:"cap_bytes,omitempty"`
	Experts   *api.ExpertTier `json:"experts,omitempty"`
	TierModel *tierModel      `json:"tier_model,omitempty"`
}

// tierModel is the model's side of a memory tier decision (cuda.TierInput).
type tierModel struct {
	ModelBytes       int64 `json:"model_bytes"`        // every weight on the device, with the states and scratch
	LayerExpertBytes int64 `json:"layer_expert_bytes"` // one layer's routed experts
	HostDenseBytes   int64 `json:"host_dense_bytes"`   // the token embedding and LM head (host memory under the host tier)
	Layers           int   `json:"layers"`
}

// madeTake is the frames a take made and whether it ended.
type madeTake struct {
	frames [][]int
	end    bool
}

type baselineTrial struct {
	Seed      uint64  `json:"rounding_seed"`
	Noise     float64 `json:"relative_noise"`
	Identical int     `json:"identical_takes"`
	Seeds     int     `json:"seeds"`
}

type forcedReport struct {
	Frames     int     `json:"frames"`
	Vectors    int     `json:"logits_vectors"`
	WorstRel   float64 `json:"worst_relative_error"` // max |gpu − cpu| / max |cpu| over a vector
	WorstFrame int     `json:"worst_frame"`
	WorstCB    int     `json:"worst_codebook"`
	// Where the error arises: codebook 0's (semantic) logits are the
	// backbone row through one GEMV (frame 0's row from the prefill, later
	// ones from steps), codebook j's add the tower up to residual layer j.
	WorstSemanticPrefill float64   `json:"worst_semantic_frame0"`
	WorstSemanticSteps   float64   `json:"worst_semantic_later_frames"`
	WorstByCB            []float64 `json:"worst_by_codebook"`
	// BitIdenticalByCB counts, per codebook, the logits vectors whose
	// float32 bits equal the CPU's (cuda.ULPDiff): what the backbone's
	// numerics contract (docs/MODEL.md) aims at.
	BitIdenticalByCB []int   `json:"bit_identical_by_codebook"`
	OverTol          int     `json:"vectors_over_tolerance"`
	Tolerance        float64 `json:"tolerance"`
	CodesDiffer      int     `json:"forced_codes_differ"` // the GPU must echo the forced codes
	FramesOnGPU      int     `json:"frames_made_gpu"`
	FramesOnHost     int     `json:"frames_made_cpu"`
}

type freeReport struct {
	cpuTakes []madeTake // the CPU's takes by seed (for the baseline)

	Seeds     int `json:"seeds"`
	Frames    int `json:"frames"`
	Identical int `json:"identical_takes"`
	// PipelineDiffers counts takes whose codes with the pipeline (each
	// frame launched ahead, as the engine runs) differ from the same take
	// frame by frame: it must be 0.
	PipelineDiffers int          `json:"pipeline_differs"`
	Divergences     []divergence `json:"divergences"`
	// The divergences by class (cpu.DrawNearTie, cpu.RoutingNearTie,
	// cpu.Unexplained); Unexplained fails the run.
	DrawNearTies    int `json:"draw_near_ties"`
	RoutingNearTies int `json:"routing_near_ties"`
	Unexplained     int `json:"unexplained"`
}

func runDebugTake(args []string) error {
	fs := flag.NewFlagSet("debug-take", flag.ContinueOnError)
	model := fs.String("model", "", "checkpoint directory")
	text := fs.String("text", "Hello there, this is a take made on the GPU and on the CPU.", "the text of the prompt")
	forcedFrames := fs.Int("forced-frames", 60, "teacher-forced frames")
	seeds := fs.Int("seeds", 20, "free-running takes (seeds 1..N)")
	freeFrames := fs.Int("frames", 40, "frames per free-running take")
	tol := fs.Float64("tol", logitsTol, "relative tolerance of a logits vector")
	confirmRouting := fs.Bool("confirm-routing", true, "count a routing near-tie only where the CPU replayed with the two experts swapped at that row and layer makes the GPU's codes (false: the margin against its bound alone)")
	baseline := fs.Int("baseline", 2, "free-running takes of the CPU with its weights rounded differently (cpu.Rounded), per seed N: how many takes float32 rounding alone changes")
	out := fs.String("out", "", "write the JSON report to this file (default: stdout)")
	memCap := fs.Int64("cap", 0, "device memory cap in bytes (0: none): a model larger keeps the routed experts of its last layers in pinned host memory (the GPU's codes against the CPU's under that tier)")
	var numerics drama3.Numerics
	fs.Var(&numerics, "numerics", drama3.NumericsUsage)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *model == "" {
		return fmt.Errorf("--model is required")
	}
	ck, err := drama3.LoadEngine(*model)
	if err != nil {
		return err
	}
	defer ck.Close()
	tok := ck.Tokenizer
	pb, err := drama3.NewPromptBuilder(tok, drama3.PromptLimits{})
	if err != nil {
		return err
	}
	prompt, err := pb.DefaultVoice(*text)
	if err != nil {
		return err
	}
	cb, err := cpu.LoadBackend(ck, nil)
	if err != nil {
		return err
	}
	host, err := drama3.NewStepFrames(cb, nil)
	if err != nil {
		return err
	}
	dev, err := cuda.Open(0, *memCap, 1<<30)
	if err != nil {
		return err
	}
	dev.Numerics = numerics
	defer dev.Close()
	capacity := len(prompt) + max(*forcedFrames, *freeFrames) + 8
	gpu, err := cuda.LoadFrames(dev, ck, nil, cuda.FramesOptions{Capacity: capacity}, nil)
	if err != nil {
		return err
	}
	defer gpu.Close()
	rep := takeReport{Model: *model, Device: dev.Info.Name, Numerics: dev.Numerics.String(), PromptTokens: len(prompt)}
	if *memCap > 0 {
		in, err := cuda.ModelTierInput(*model, capacity, 1)
		if err != nil {
			return err
		}
		rep.Cap, rep.Experts = *memCap, expertTier(gpu.Tier(), gpu.ExpertCache())
		rep.TierModel = &tierModel{ModelBytes: in.ModelBytes, LayerExpertBytes: slices.Max(in.LayerExperts), HostDenseBytes: in.HostDense, Layers: len(in.LayerExperts)}
	}
	if rep.Forced, err = teacherForced(host, gpu, prompt, *forcedFrames, *tol); err != nil {
		return fmt.Errorf("teacher-forced: %w", err)
	}
	ex := &cpu.Explainer{Ref: cb, Prompt: prompt, Settings: freeSettings, Tol: *tol, Confirm: *confirmRouting,
		Rounded: func() (*cpu.Backend, error) { return cpu.LoadBackendRounded(ck, 1) }}
	if rep.Free, err = freeRunning(host, gpu, ex, prompt, *seeds, *freeFrames); err != nil {
		return err
	}
	if rep.Baseline, err = roundingBaseline(ck, prompt, rep.Free.cpuTakes, *freeFrames, *baseline); err != nil {
		return fmt.Errorf("free-running: %w", err)
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	if *out != "" {
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	fmt.Println(string(b))
	fmt.Fprintln(os.Stderr, rep.summary())
	if failed := rep.mismatches(numerics.Exact()); len(failed) > 0 {
		return fmt.Errorf("the GPU take does not match the CPU's: %s", strings.Join(failed, "; "))
	}
	return nil
}

// mismatches are the report's failures; exact holds the semantic logits to
// the CPU's bits.
func (rep *takeReport) mismatches(exact bool) []string {
	var out []string
	f := &rep.Forced
	if f.CodesDiffer > 0 || f.FramesOnGPU != f.FramesOnHost {
		out = append(out, fmt.Sprintf("teacher-forced: %d codes not echoed, %d frames on the GPU and %d on the CPU", f.CodesDiffer, f.FramesOnGPU, f.FramesOnHost))
	}
	if f.OverTol > 0 {
		out = append(out, fmt.Sprintf("teacher-forced: %d logits vectors past the tolerance %g (worst %.3g, frame %d codebook %d)", f.OverTol, f.Tolerance, f.WorstRel, f.WorstFrame, f.WorstCB))
	}
	if exact && (len(f.BitIdenticalByCB) == 0 || f.BitIdenticalByCB[0] != f.FramesOnHost) {
		n := 0
		if len(f.BitIdenticalByCB) > 0 {
			n = f.BitIdenticalByCB[0]
		}
		out = append(out, fmt.Sprintf("exact: %d of %d teacher-forced semantic logits vectors have the CPU's bits", n, f.FramesOnHost))
	}
	if rep.Free.PipelineDiffers > 0 {
		out = append(out, fmt.Sprintf("free-running: %d pipelined takes differ from the same takes frame by frame", rep.Free.PipelineDiffers))
	}
	for _, d := range rep.Free.Divergences {
		if d.Class == cpu.Unexplained {
			out = append(out, fmt.Sprintf("free-running seed %d: diverges at frame %d codebook %d (CPU %d, GPU %d), unexplained: logits %.3g apart (relative, first off the tolerance at frame %d), draw margin %.3g against %.3g, %s", d.Seed, d.Frame, d.Codebook, d.CPUCode, d.GPUCode, d.LogitsRel, d.FirstOff, d.DrawMargin, d.MarginBound, routingText(d.Routing)))
		}
	}
	return out
}

// routingText is a routing tie's figures in words.
func routingText(r *cpu.RoutingTie) string {
	if r == nil {
		return "no routed row"
	}
	s := fmt.Sprintf("smallest routing margin %.3g (%.3g relative) against %.3g at frame %d's run, position %d layer %d, experts %d|%d", r.Margin, r.Rel, r.Bound, r.Frame, r.Pos, r.Layer, r.Kth, r.Next)
	if r.Confirmed != nil {
		s += fmt.Sprintf(", swapped replay confirms: %v (logits %.3g off)", *r.Confirmed, r.ReplayLogitsDiff)
	}
	return s
}

// summary is the report's free-running agreement in one line: the rate of
// identical takes beside the CPU-against-rounded-CPU baseline, and the
// divergences by class.
func (rep *takeReport) summary() string {
	f := &rep.Free
	s := fmt.Sprintf("free-running: %d / %d takes identical to the CPU's", f.Identical, f.Seeds)
	if len(rep.Baseline) > 0 {
		var b []string
		for _, t := range rep.Baseline {
			b = append(b, fmt.Sprintf("%d / %d", t.Identical, t.Seeds))
		}
		s += " (the CPU against itself rounded differently: " + strings.Join(b, ", ") + ")"
	}
	s += fmt.Sprintf("; %d divergences: %d draw near-ties, %d routing near-ties, %d unexplained", len(f.Divergences), f.DrawNearTies, f.RoutingNearTies, f.Unexplained)
	for _, d := range f.Divergences {
		if d.Class != cpu.DrawNearTie {
			s += fmt.Sprintf("\n  seed %d frame %d codebook %d: %s, logits %.3g apart; %s", d.Seed, d.Frame, d.Codebook, d.Class, d.LogitsRel, routingText(d.Routing))
		}
	}
	return s
}

// takeFrames begins a take of prompt on b and runs up to n frames of it
// (forced: codes per frame, or nil): the frames made and whether it ended.
func takeFrames(b drama3.FrameBackend, prompt []int, s sampling.Settings, seed uint64, n int, forced [][]int) ([][]int, bool, error) {
	if err := b.Begin(context.Background(), prompt, s, seed); err != nil {
		return nil, false, err
	}
	return drama3.MakeFrames(b, n, forced)
}

func teacherForced(host *drama3.StepFrames, gpu *cuda.Frames, prompt []int, n int, tol float64) (forcedReport, error) {
	entries := host.CodebookEntries()
	r := rand.New(rand.NewPCG(7, 11))
	forced := make([][]int, n)
	for f := range forced {
		forced[f] = make([]int, len(entries))
		for c, e := range entries {
			forced[f][c] = r.IntN(e)
		}
	}
	s := sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}
	hl, gl := drama3.LogitsLog{}, drama3.LogitsLog{}
	host.TapLogits(hl.Tap)
	gpu.TapLogits(gl.Tap)
	defer host.TapLogits(nil)
	defer gpu.TapLogits(nil)
	hf, _, err := takeFrames(host, prompt, s, 1, n, forced)
	if err != nil {
		return forcedReport{}, fmt.Errorf("cpu: %w", err)
	}
	gf, _, err := takeFrames(gpu, prompt, s, 1, n, forced)
	if err != nil {
		return forcedReport{}, fmt.Errorf("gpu: %w", err)
	}
	rep := forcedReport{Frames: n, Tolerance: tol, FramesOnGPU: len(gf), FramesOnHost: len(hf), WorstFrame: -1, WorstCB: -1}
	for f := range gf {
		for c := range gf[f] {
			if gf[f][c] != forced[f][c] {
				rep.CodesDiffer++
			}
		}
	}
	for key, hv := range hl {
		gv, ok := gl[key]
		if !ok || len(gv) != len(hv) {
			return rep, fmt.Errorf("frame %d codebook %d: the GPU has no logits of that size", key[0], key[1])
		}
		rel := drama3.LogitsDiff(gv, hv)
		rep.Vectors++
		for len(rep.WorstByCB) <= key[1] {
			rep.WorstByCB = append(rep.WorstByCB, 0)
			rep.BitIdenticalByCB = append(rep.BitIdenticalByCB, 0)
		}
		rep.WorstByCB[key[1]] = math.Max(rep.WorstByCB[key[1]], rel)
		if differ, _ := cuda.ULPDiff(gv, hv); differ == 0 {
			rep.BitIdenticalByCB[key[1]]++
		}
		if key[1] == 0 && key[0] == 0 {
			rep.WorstSemanticPrefill = rel
		} else if key[1] == 0 {
			rep.WorstSemanticSteps = math.Max(rep.WorstSemanticSteps, rel)
		}
		if rel > rep.WorstRel || math.IsNaN(rel) {
			rep.WorstRel, rep.WorstFrame, rep.WorstCB = rel, key[0], key[1]
		}
		if !(rel <= tol) {
			rep.OverTol++
		}
	}
	return rep, nil
}

// freeSettings are the free-running takes' sampling settings.
var freeSettings = sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}

func freeRunning(host *drama3.StepFrames, gpu *cuda.Frames, ex *cpu.Explainer, prompt []int, seeds, n int) (freeReport, error) {
	rep := freeReport{Seeds: seeds, Frames: n, Divergences: []divergence{}}
	s := freeSettings
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		gpu.TapLogits(nil)
		gpu.SetPipeline(true)
		pf, pEnd, err := takeFrames(gpu, prompt, s, seed, n, nil)
		gpu.SetPipeline(false)
		if err != nil {
			return rep, fmt.Errorf("gpu seed %d, pipelined: %w", seed, err)
		}
		hl, gl := drama3.LogitsLog{}, drama3.LogitsLog{}
		host.TapLogits(hl.Tap)
		gpu.TapLogits(gl.Tap)
		hf, hEnd, err := takeFrames(host, prompt, s, seed, n, nil)
		if err != nil {
			return rep, fmt.Errorf("cpu seed %d: %w", seed, err)
		}
		rep.cpuTakes = append(rep.cpuTakes, madeTake{hf, hEnd})
		gf, gEnd, err := takeFrames(gpu, prompt, s, seed, n, nil)
		if err != nil {
			return rep, fmt.Errorf("gpu seed %d: %w", seed, err)
		}
		if firstDivergence(pf, gf, pEnd, gEnd) != nil {
			rep.PipelineDiffers++
		}
		d := firstDivergence(hf, gf, hEnd, gEnd)
		if d == nil {
			rep.Identical++
			continue
		}
		d.Seed = seed
		if p, ok := judgeParting(hf, gf, d, hl, gl, s, seed); ok {
			d.LogitGap = p.gap
			for i := range p.av {
				d.LogitsErr = math.Max(d.LogitsErr, math.Abs(float64(p.bv[i])-float64(p.av[i])))
			}
			d.NearTie, d.DrawMargin, d.MarginBound = p.nearTie, p.margin, p.bound
		}
		x, err := ex.Explain(seed, cpu.TakeLog{Frames: hf, End: hEnd, Logits: hl}, cpu.TakeLog{Frames: gf, End: gEnd, Logits: gl}, d.Frame, d.Codebook)
		if err != nil {
			return rep, fmt.Errorf("seed %d: explaining the divergence at frame %d: %w", seed, d.Frame, err)
		}
		d.Class, d.LogitsRel, d.FirstOff, d.Routing = x.Class, x.LogitsRel, x.FirstOff, x.Routing
		switch x.Class {
		case cpu.DrawNearTie:
			rep.DrawNearTies++
		case cpu.RoutingNearTie:
			rep.RoutingNearTies++
		default:
			rep.Unexplained++
		}
		rep.Divergences = append(rep.Divergences, *d)
	}
	host.TapLogits(nil)
	gpu.TapLogits(nil)
	return rep, nil
}

// roundingBaseline runs the free-running takes again on the CPU with its
// weights Rounded by seeds 1…trials and counts those equal to the CPU's own.
func roundingBaseline(ck *drama3.Checkpoint, prompt []int, cpuTakes []madeTake, n, trials int) ([]baselineTrial, error) {
	var out []baselineTrial
	s := sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}
	for trial := uint64(1); trial <= uint64(trials); trial++ {
		cb, err := cpu.LoadBackendRounded(ck, trial)
		if err != nil {
			return nil, err
		}
		host, err := drama3.NewStepFrames(cb, nil)
		if err != nil {
			return nil, err
		}
		bt := baselineTrial{Seed: trial, Noise: cpu.RoundingNoise, Seeds: len(cpuTakes)}
		for i, want := range cpuTakes {
			got, end, err := takeFrames(host, prompt, s, uint64(i+1), n, nil)
			if err != nil {
				return nil, fmt.Errorf("rounded cpu %d, seed %d: %w", trial, i+1, err)
			}
			if firstDivergence(want.frames, got, want.end, end) == nil {
				bt.Identical++
			}
		}
		out = append(out, bt)
	}
	return out, nil
}
