//go:build cuda

package cuda

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// Reference-voice prompts on the GPU frame backend against the CPU
// reference (cpu.Backend.BeginPrompt) on the make-tiny checkpoints
// (tinyCheckpoints): one and two references of random codes,
// prompts of two and three backbone chunks. Teacher-forced frames: every
// logits vector within promptTol of the CPU's; free-running seeds: the codes
// of the pipelined GPU take equal those of the same take frame by frame, and
// each divergence from the CPU is logged with the CPU's logit gap and must
// come from logits within the tolerance and be a near-tie of the draw
// (drama3.NearTie), not a wrong prompt.

const promptTol = 1e-4

func TestFramesBeginPromptMatchesTheCPU(t *testing.T) {
	dirs, err := tinyCheckpoints()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) { testBeginPrompt(t, dir) })
	}
}

// promptSampling is the sampling of the free-running takes.
var promptSampling = sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}

// promptTake begins p on b and runs up to n frames (forced: codes per
// frame, or nil); it returns the frames made and whether the take ended.
func promptTake(t *testing.T, b interface {
	drama3.FrameBackend
	drama3.PromptBackend
}, p drama3.Prompt, seed uint64, n int, forced [][]int) ([][]int, bool) {
	t.Helper()
	if err := b.BeginPrompt(context.Background(), p, promptSampling, seed); err != nil {
		t.Fatal(err)
	}
	frames, ended, err := drama3.MakeFrames(b, n, forced)
	if err != nil {
		t.Fatalf("frame %d: %v", len(frames), err)
	}
	return frames, ended
}

func testBeginPrompt(t *testing.T, dir string) {
	ck, err := drama3.LoadEngine(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	pb, err := drama3.NewPromptBuilder(ck.Tokenizer, drama3.PromptLimits{})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := cpu.LoadBackend(ck, nil)
	if err != nil {
		t.Fatal(err)
	}
	host, err := drama3.NewStepFrames(cb, nil)
	if err != nil {
		t.Fatal(err)
	}
	entries := host.CodebookEntries()
	r := newRand(t)
	one := drama3.Reference{Transcript: "A reference line, said once and clearly.", Codes: randomFrames(r, entries, 37)}
	two := drama3.Reference{Transcript: "And a second voice answers it.", Codes: randomFrames(r, entries, 45)}
	const text = "Hello there, this is a take in a cloned voice."
	cases := []struct {
		name string
		refs []drama3.Reference
		p    drama3.Prompt
	}{{name: "one reference", refs: []drama3.Reference{one}}, {name: "two references", refs: []drama3.Reference{one, two}}}
	const forcedFrames, freeFrames, seeds = 20, 30, 4
	longest := 0
	for i := range cases {
		if cases[i].p, err = pb.ReferenceVoice(text, cases[i].refs, entries); err != nil {
			t.Fatal(err)
		}
		longest = max(longest, len(cases[i].p))
	}
	gpu, err := LoadFrames(dev, ck, nil, FramesOptions{Capacity: longest + max(forcedFrames, freeFrames) + 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Logf("%d prompt rows, %d of them reference frames (backbone chunk %d)", len(c.p), c.p.AudioRows(), gpu.Backbone().Plan.Chunk)
			forced := randomFrames(r, entries, forcedFrames)
			hl, gl := drama3.LogitsLog{}, drama3.LogitsLog{}
			host.TapLogits(hl.Tap)
			gpu.TapLogits(gl.Tap)
			promptTake(t, host, c.p, 1, forcedFrames, forced)
			gf, _ := promptTake(t, gpu, c.p, 1, forcedFrames, forced)
			host.TapLogits(nil)
			gpu.TapLogits(nil)
			for f := range gf {
				for k := range gf[f] {
					if gf[f][k] != forced[f][k] {
						t.Fatalf("teacher-forced frame %d codebook %d: the GPU made %d, forced %d", f, k, gf[f][k], forced[f][k])
					}
				}
			}
			worst, over := 0.0, 0
			for key, hv := range hl {
				gv, ok := gl[key]
				if !ok || len(gv) != len(hv) {
					t.Fatalf("frame %d codebook %d: the GPU has no logits of that size", key[0], key[1])
				}
				rel := drama3.LogitsDiff(gv, hv)
				worst = max(worst, rel)
				if !(rel <= promptTol) {
					over++
					t.Errorf("teacher-forced frame %d codebook %d: logits %.3g relative from the CPU's (tolerance %g)", key[0], key[1], rel, promptTol)
				}
			}
			if len(hl) != forcedFrames*len(entries) {
				t.Fatalf("%d logits vectors from the CPU, want %d", len(hl), forcedFrames*len(entries))
			}
			t.Logf("teacher-forced: %d frames, %d logits vectors, worst relative error %.3g, %d over %g", forcedFrames, len(hl), worst, over, promptTol)

			identical := 0
			for seed := uint64(1); seed <= seeds; seed++ {
				gpu.SetPipeline(true)
				pf, pEnd := promptTake(t, gpu, c.p, seed, freeFrames, nil)
				gpu.SetPipeline(false)
				hl, gl := drama3.LogitsLog{}, drama3.LogitsLog{}
				host.TapLogits(hl.Tap)
				gpu.TapLogits(gl.Tap)
				hf, hEnd := promptTake(t, host, c.p, seed, freeFrames, nil)
				gf, gEnd := promptTake(t, gpu, c.p, seed, freeFrames, nil)
				host.TapLogits(nil)
				gpu.TapLogits(nil)
				if f, k := firstCodeDifference(pf, gf, pEnd, gEnd); f >= 0 {
					t.Errorf("seed %d: the pipelined take differs from the same take frame by frame at frame %d codebook %d", seed, f, k)
				}
				f, k := firstCodeDifference(hf, gf, hEnd, gEnd)
				if f < 0 {
					identical++
					continue
				}
				if k < 0 {
					t.Errorf("seed %d: the CPU made %d frames (end %v), the GPU %d (end %v)", seed, len(hf), hEnd, len(gf), gEnd)
					continue
				}
				key := [2]int{f, k}
				hv, gv := hl[key], gl[key]
				gap := math.Abs(float64(hv[hf[f][k]]) - float64(hv[gf[f][k]]))
				rel := drama3.LogitsDiff(gv, hv)
				near, margin, bound := drama3.NearTie(hv, gv, promptSampling, drama3.Uniform(seed, f, k), hf[f][k], gf[f][k])
				t.Logf("seed %d: diverges at frame %d codebook %d: CPU %d, GPU %d, CPU logit gap %.3g, logits %.3g relative apart, draw margin %.3g (bound %.3g)",
					seed, f, k, hf[f][k], gf[f][k], gap, rel, margin, bound)
				if !(rel <= promptTol) {
					t.Errorf("seed %d frame %d codebook %d: logits %.3g relative from the CPU's (tolerance %g)", seed, f, k, rel, promptTol)
				}
				if !near {
					t.Errorf("seed %d frame %d codebook %d: not a near-tie: the draw's margin %.3g is past %.3g and the two codes' logits lie %.3g apart, more than the logits' difference explains (drama3.NearTie)", seed, f, k, margin, bound, gap)
				}
			}
			t.Logf("free-running: %d of %d seeds identical to the CPU over %d frames", identical, seeds, freeFrames)
		})
	}

	// A prompt the backend cannot take changes nothing and says why.
	bad := append(drama3.Prompt(nil), cases[0].p...)
	for i, row := range bad {
		if row.Codes != nil {
			bad[i].Codes = append([]int(nil), row.Codes...)
			bad[i].Codes[1] = entries[1]
			break
		}
	}
	if err := gpu.BeginPrompt(context.Background(), bad, sampling.Settings{TopP: 1}, 1); err == nil {
		t.Fatal("a reference code outside its codebook was taken")
	} else {
		t.Logf("bad code: %v", err)
	}
	if err := gpu.BeginPrompt(context.Background(), drama3.Prompt{{Token: 1, Codes: make([]int, len(entries))}}, sampling.Settings{TopP: 1}, 1); err == nil {
		t.Fatal("a prompt starting with an audio row was taken")
	}
}

// firstCodeDifference is the first frame and codebook in which two takes
// differ ((−1, −1): none; (f, −1): one ended or ran longer at frame f).
func firstCodeDifference(a, b [][]int, aEnd, bEnd bool) (int, int) {
	for f := 0; f < min(len(a), len(b)); f++ {
		for c := range a[f] {
			if a[f][c] != b[f][c] {
				return f, c
			}
		}
	}
	if len(a) != len(b) || aEnd != bEnd {
		return min(len(a), len(b)), -1
	}
	return -1, -1
}
