//go:build cuda

package main

import (
	"errors"
	"flag"
	"fmt"

	"proscenium/cmd/internal/debugcodec"
	"proscenium/engine/cuda"
)

// debug-decode: the CUDA form of `proscenium debug decode` (same arguments
// and outputs), which forwards here with --backend cuda.

func init() {
	registerTool(tool{name: "debug-decode", summary: "GPU codec decode of codes [10, T] to PCM (.npy), as `proscenium debug decode`", run: runDebugDecode})
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
		if err := debugcodec.CheckDir("--stages", *stages); err != nil {
			return err
		}
	}
	ref, codes, frames, err := debugcodec.Read(*codecPath, *codesPath, *window)
	if err != nil {
		return err
	}
	g := ref.Geometry()
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
	plan := ref.Plan()
	codec, err := cuda.NewCodec(dev, &plan)
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
		if err := debugcodec.WriteStages(*stages, g.Latent, res.ZRVQ, res.ZPost, res.ZUp); err != nil {
			return err
		}
	}
	return debugcodec.WritePCM(*out, *wav, pcm)
}
