//go:build cuda

package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"proscenium/engine/audio"
	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// The GPU codec's tools: debug-decode (the CUDA form of `proscenium debug
// decode`, same arguments and outputs) and bench-codec (`proscenium bench
// codec`).

func init() {
	registerTool(tool{name: "debug-decode", summary: "GPU codec decode of codes [10, T] to PCM (.npy), as `proscenium debug decode`", run: runDebugDecode})
	registerTool(tool{name: "bench-codec", summary: "GPU codec speed at the S2 geometry with random weights (streaming, first frame, whole decode)", run: runBenchCodec})
}

func runDebugDecode(args []string) error {
	fs := flag.NewFlagSet("proscenium-gpu debug-decode", flag.ContinueOnError)
	codecPath := fs.String("codec", "", "codec.pth (required)")
	codesPath := fs.String("codes", "", "codes .npy: int64 or int32 [codebooks, T] (required)")
	window := fs.Int("window", 0, "post-module attention window in frames (0: the codec's)")
	out := fs.String("out", "", "output .npy: float32 [T·samples per frame] (required)")
	stages := fs.String("stages", "", "directory for z_rvq.npy, z_post.npy and z_up.npy (optional)")
	wav := fs.String("wav", "", "also write a 44.1 kHz float32 WAV here (optional)")
	from := fs.Int("from", 0, "first frame of a streaming chunk (optional)")
	to := fs.Int("to", 0, "end frame of a streaming chunk (0: all frames)")
	ordinal := fs.Int("device", 0, "CUDA device ordinal")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *codecPath == "" || *codesPath == "" || *out == "" {
		return errors.New("--codec, --codes and --out are required")
	}
	if *window < 0 {
		return fmt.Errorf("--window %d must be positive", *window)
	}
	chunk := *from != 0 || *to != 0
	if chunk && *stages != "" {
		return errors.New("--stages needs a whole decode (no --from/--to)")
	}
	if *stages != "" {
		if st, err := os.Stat(*stages); err != nil || !st.IsDir() {
			return fmt.Errorf("--stages %s is not a directory", *stages)
		}
	}
	ref, err := cpu.LoadCodecFile(*codecPath, cpu.CodecOptions{Window: *window})
	if err != nil {
		return err
	}
	ct, err := checkpoint.ReadNPYFile(*codesPath)
	if err != nil {
		return err
	}
	g := ref.Geometry()
	if len(ct.Shape) != 2 || ct.Shape[0] != g.Codebooks() {
		return fmt.Errorf("codes %s: shape %v, want [%d, frames]", *codesPath, ct.Shape, g.Codebooks())
	}
	codes, frames, err := cpu.CodecCodesFromNPY(ct)
	if err != nil {
		return err
	}
	end := frames
	if chunk && *to != 0 {
		end = *to
	}
	if *from < 0 || end <= *from || end > frames {
		return fmt.Errorf("codes %s: codec: frames [%d, %d) outside the %d frames given", *codesPath, *from, end, frames)
	}
	dev, err := cuda.Open(*ordinal, 0, 0)
	if err != nil {
		return err
	}
	defer dev.Close()
	codec, err := cuda.NewCodec(dev, ref)
	if err != nil {
		return err
	}
	defer codec.Close()
	nb, spf := g.Codebooks(), g.SamplesPerFrame
	var pcm []float32
	var res *cuda.CodecStages
	if chunk {
		// The receptive field's frames, without history: samples from
		// --from on equal the whole decode's.
		first := max(0, *from-g.HistoryFrames)
		s, err := codec.NewStreamAt(first, end-first)
		if err != nil {
			return err
		}
		all, err := s.Push(codes[first*nb : end*nb])
		s.Close()
		if err != nil {
			return fmt.Errorf("codes %s: %w", *codesPath, err)
		}
		pcm = all[(*from-first)*spf:]
	} else {
		if res, err = codec.DecodeStages(codes); err != nil {
			return fmt.Errorf("codes %s: %w", *codesPath, err)
		}
		pcm = res.PCM
	}
	if res != nil && *stages != "" {
		for _, s := range []struct {
			name string
			v    []float32
		}{{"z_rvq", res.ZRVQ}, {"z_post", res.ZPost}, {"z_up", res.ZUp}} {
			shape := []int{g.Latent, len(s.v) / g.Latent}
			if err := checkpoint.WriteNPYFile(filepath.Join(*stages, s.name+".npy"), checkpoint.Float32Tensor(s.name, shape, s.v)); err != nil {
				return err
			}
		}
	}
	if *wav != "" {
		if err := audio.WriteWAV(*wav, pcm, audio.SampleRate, audio.Float32); err != nil {
			return err
		}
	}
	return checkpoint.WriteNPYFile(*out, checkpoint.Float32Tensor("pcm", []int{len(pcm)}, pcm))
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
	Policy          string  `json:"policy"`
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
	ref, err := cpu.LoadCodec(cpu.CodecRandomTensors(1, 1024, 1536, 8), cpu.CodecOptions{})
	if err != nil {
		return err
	}
	g := ref.Geometry()
	dev, err := cuda.Open(*ordinal, 0, 0)
	if err != nil {
		return err
	}
	defer dev.Close()
	codec, err := cuda.NewCodec(dev, ref)
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
		_, err = ws.Push(codes)
		ms := time.Since(start).Seconds() * 1e3
		ws.Close()
		if err != nil {
			return err
		}
		if r > 0 {
			whole = append(whole, ms/float64(nf))
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
	audioMsPerFrame := float64(spf) / audio.SampleRate * 1e3
	res := codecBenchResult{
		Device:   dev.Info.Name,
		Geometry: fmt.Sprintf("S2 random: latent %d, %d post-module layers of %d heads, window %d, decoder %d, strides %v", g.Latent, g.PostLayers, g.PostHeads, g.Window, g.DecoderDim, g.DecoderStrides),
		Frames:   nf, Chunks: len(bounds), Repeats: *repeats,
		Policy:        fmt.Sprintf("%d, ×%d, up to %d frames", policy.First, policy.Growth, policy.Max),
		StreamMsPerFr: median(stream), FirstFrameMs: median(first), WholeMsPerFr: median(whole),
		Stages: stageTimes,
	}
	res.WholeFramesPerS = 1e3 / res.WholeMsPerFr
	res.StreamRealtime = audioMsPerFrame / res.StreamMsPerFr
	res.WholeRealtime = audioMsPerFrame / res.WholeMsPerFr
	if *asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Println(string(b))
		return nil
	}
	fmt.Printf("GPU codec, %s\n%s; %d-frame take (%.1f s of audio), median of %d\n", res.Device, res.Geometry, nf, float64(nf)*audioMsPerFrame/1e3, *repeats)
	fmt.Printf("  %-44s %10.3f ms/frame  (%.0f× real time)\n", fmt.Sprintf("streaming, chunks %s (%d)", res.Policy, res.Chunks), res.StreamMsPerFr, res.StreamRealtime)
	fmt.Printf("  %-44s %10.3f ms\n", "first frame (one-frame chunk, fresh stream)", res.FirstFrameMs)
	fmt.Printf("  %-44s %10.3f ms/frame  (%.0f frames/s, %.0f× real time)\n", "whole decode (one chunk)", res.WholeMsPerFr, res.WholeFramesPerS, res.WholeRealtime)
	if len(stageTimes) > 0 {
		fmt.Printf("device time per stage, one %d-frame chunk:\n", policy.Max)
		for _, st := range stageTimes {
			fmt.Printf("  %-44s %10.3f ms\n", st.Stage, st.Ms)
		}
	}
	return nil
}
