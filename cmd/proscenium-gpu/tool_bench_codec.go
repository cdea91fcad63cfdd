//go:build cuda

package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"time"

	"proscenium/engine/audio/pcm"
	"proscenium/engine/cpu"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// bench-codec: the GPU codec's speed at the S2 geometry with random weights
// (`proscenium bench codec` forwards here).

func init() {
	registerTool(tool{name: "bench-codec", summary: "GPU codec speed at the S2 geometry with random weights (streaming, first frame, whole decode)", run: runBenchCodec})
}

// codecBenchResult is what bench-codec measures (docs/PERF.md "GPU codec").
type codecBenchResult struct {
	Device          string  `json:"device"`
	Geometry        string  `json:"geometry"`
	Frames          int     `json:"frames"`
	Chunks          int     `json:"chunks"`
	StreamMsPerFr   float64 `json:"stream_ms_per_frame"` // the take's chunk policy, amortised
	FirstFrameMs    float64 `json:"first_frame_ms"`      // one-frame first chunk of a fresh stream
	WholeMsPerFr    float64 `json:"whole_ms_per_frame"`  // one decode of every frame
	WholeFramesPerS float64 `json:"whole_frames_per_s"`  // the same as a rate
	StreamRealtime  float64 `json:"stream_x_realtime"`   // audio seconds per second, streaming
	WholeRealtime   float64 `json:"whole_x_realtime"`    // audio seconds per second, whole decode
	Repeats         int     `json:"repeats"`             // each figure is the median of this many runs
	// WholeDigest is an FNV-1a digest of the whole decode's samples' bits:
	// two builds that decode alike give the same (a kernel change that
	// should keep the bits is checked by it).
	WholeDigest string `json:"whole_digest"`
	Policy      string `json:"policy"`
	// Stages is the device time of each stage in one chunk of the policy's
	// largest size (--stages).
	Stages []cuda.CodecStageTime `json:"stages,omitempty"`
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func runBenchCodec(args []string) error {
	fs := flag.NewFlagSet("proscenium-gpu bench-codec", flag.ContinueOnError)
	synthetic := fs.String("synthetic", "", "geometry with random weights: s2 (required)")
	frames := fs.Int("frames", 512, "frames per take")
	repeats := fs.Int("repeats", 5, "runs per figure (the median is reported)")
	asJSON := fs.Bool("json", false, "print JSON")
	ordinal := fs.Int("device", 0, "CUDA device ordinal")
	stages := fs.Bool("stages", false, "also time each stage of one full-size chunk")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *synthetic != "s2" {
		return fmt.Errorf("--synthetic %q: the only geometry is s2", *synthetic)
	}
	if *frames < 1 || *repeats < 1 {
		return fmt.Errorf("--frames %d and --repeats %d must be positive", *frames, *repeats)
	}
	ref, err := cpu.LoadCodec(cpu.CodecRandomTensors(1, 1024, 1536, 8), drama3.CodecOptions{})
	if err != nil {
		return err
	}
	g := ref.Geometry()
	dev, err := cuda.Open(*ordinal, 0, 0)
	if err != nil {
		return err
	}
	defer dev.Close()
	plan := ref.Plan()
	codec, err := cuda.NewCodec(dev, &plan)
	if err != nil {
		return err
	}
	defer codec.Close()
	nf, nb, spf := *frames, g.Codebooks(), g.SamplesPerFrame
	codes := cpu.CodecRandomCodes(2, nf)
	policy := drama3.DefaultChunkPolicy()
	chunker, err := drama3.NewChunker(policy)
	if err != nil {
		return err
	}
	var bounds [][2]int
	for {
		from, to, ok := chunker.Next(nf)
		if !ok {
			break
		}
		bounds = append(bounds, [2]int{from, to})
	}
	if from, to, ok := chunker.Rest(nf); ok {
		bounds = append(bounds, [2]int{from, to})
	}

	// One warm-up take loads every kernel.
	streamTake := func() (total, first float64, err error) {
		s, err := codec.NewStream(policy.Max)
		if err != nil {
			return 0, 0, err
		}
		defer s.Close()
		start := time.Now()
		for i, b := range bounds {
			if _, err := s.Push(codes[b[0]*nb : b[1]*nb]); err != nil {
				return 0, 0, err
			}
			if i == 0 {
				first = time.Since(start).Seconds() * 1e3
			}
		}
		return time.Since(start).Seconds() * 1e3, first, nil
	}
	if _, _, err := streamTake(); err != nil {
		return err
	}
	var stream, first, whole []float64
	var digest string
	for r := 0; r < *repeats; r++ {
		total, f, err := streamTake()
		if err != nil {
			return err
		}
		stream, first = append(stream, total/float64(nf)), append(first, f)
	}
	for r := 0; r <= *repeats; r++ { // run 0 warms up
		ws, err := codec.NewStream(nf)
		if err != nil {
			return err
		}
		start := time.Now()
		samples, err := ws.Push(codes)
		ms := time.Since(start).Seconds() * 1e3
		ws.Close()
		if err != nil {
			return err
		}
		if r > 0 {
			whole = append(whole, ms/float64(nf))
		}
		if r == *repeats { // every run decodes the same codes: one digest
			digest = samplesDigest(samples)
		}
	}
	var stageTimes []cuda.CodecStageTime
	if *stages && nf < 2*policy.Max {
		return fmt.Errorf("--stages needs --frames ≥ %d", 2*policy.Max)
	}
	if *stages {
		s, err := codec.NewStream(policy.Max)
		if err != nil {
			return err
		}
		for i := 0; i < 2 && err == nil; i++ { // the second chunk has history
			stageTimes, err = s.StageTimes(codes[i*policy.Max*nb : (i+1)*policy.Max*nb])
		}
		s.Close()
		if err != nil {
			return err
		}
	}
	audioMsPerFrame := float64(spf) / pcm.SampleRate * 1e3
	res := codecBenchResult{
		Device:   dev.Info.Name,
		Geometry: fmt.Sprintf("S2 random: latent %d, %d post-module layers of %d heads, window %d, decoder %d, strides %v", g.Latent, g.PostLayers, g.PostHeads, g.Window, g.DecoderDim, g.DecoderStrides),
		Frames:   nf, Chunks: len(bounds), Repeats: *repeats,
		Policy:        fmt.Sprintf("%d, ×%d, up to %d frames", policy.First, policy.Growth, policy.Max),
		StreamMsPerFr: median(stream), FirstFrameMs: median(first), WholeMsPerFr: median(whole),
		Stages: stageTimes, WholeDigest: digest,
	}
	res.WholeFramesPerS = 1e3 / res.WholeMsPerFr
	res.StreamRealtime = audioMsPerFrame / res.StreamMsPerFr
	res.WholeRealtime = audioMsPerFrame / res.WholeMsPerFr
	if *asJSON {
		return printJSON(res)
	}
	fmt.Printf("GPU codec, %s\n%s; %d-frame take (%.1f s of audio), median of %d\n", res.Device, res.Geometry, nf, float64(nf)*audioMsPerFrame/1e3, *repeats)
	fmt.Printf("  %-44s %10.3f ms/frame  (%.0f× real time)\n", fmt.Sprintf("streaming, chunks %s (%d)", res.Policy, res.Chunks), res.StreamMsPerFr, res.StreamRealtime)
	fmt.Printf("  %-44s %10.3f ms\n", "first frame (one-frame chunk, fresh stream)", res.FirstFrameMs)
	fmt.Printf("  %-44s %10.3f ms/frame  (%.0f frames/s, %.0f× real time)\n", "whole decode (one chunk)", res.WholeMsPerFr, res.WholeFramesPerS, res.WholeRealtime)
	fmt.Printf("  %-44s %10s\n", "whole decode's samples, digest", res.WholeDigest)
	if len(stageTimes) > 0 {
		fmt.Printf("device time per stage, one %d-frame chunk:\n", policy.Max)
		for _, st := range stageTimes {
			fmt.Printf("  %-44s %10.3f ms\n", st.Stage, st.Ms)
		}
	}
	return nil
}

// samplesDigest is an FNV-1a digest of the samples' float32 bits.
func samplesDigest(pcm []float32) string {
	h := fnv.New32a()
	var b [4]byte
	for _, v := range pcm {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		h.Write(b[:])
	}
	return fmt.Sprintf("%08x", h.Sum32())
}
