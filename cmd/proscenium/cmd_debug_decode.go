package main

import (
	"fmt"

	"proscenium/cmd/internal/debugcodec"
	"proscenium/engine/drama3"
)

func init() {
	registerDebug(command{name: "decode", summary: "codec decode of codes [10, T] to PCM float32 [T·2048] (.npy), on the CPU or (--backend cuda) the GPU", run: runDebugDecode})
}

// runDebugDecode decodes a codes .npy with the CPU reference codec and writes
// the PCM as .npy; --stages also writes the stage outputs in the reference's
// layout (z_rvq, z_post [latent, T], z_up [latent, 4T]), --wav a WAV file.
// --from/--to decode one streaming chunk: samples [from·2048, to·2048) of the
// whole decode, reading only the frames its receptive field reaches.
func runDebugDecode(args []string) error {
	fs := newFlags("debug decode")
	codecPath := fs.String("codec", "", "codec.pth (torch state dict of the S2 codec) (required)")
	codesPath := fs.String("codes", "", "codes .npy: int64 or int32 [codebooks, T] (required)")
	window := fs.Int("window", 0, fmt.Sprintf("post-module attention window in frames (0: the codec's %d)", drama3.CodecDefaultWindow))
	out := fs.String("out", "", "output .npy: float32 [T·samples per frame] (required)")
	stages := fs.String("stages", "", "directory for z_rvq.npy, z_post.npy and z_up.npy (optional)")
	wav := fs.String("wav", "", "also write a 44.1 kHz float32 WAV here (optional)")
	from := fs.Int("from", 0, "first frame of a streaming chunk (optional)")
	to := fs.Int("to", 0, "end frame of a streaming chunk (0: all frames)")
	backend := debugBackendFlags(fs, "debug-decode")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if done, err := backend.forward(); done {
		return err
	}
	if *codecPath == "" || *codesPath == "" || *out == "" {
		return fmt.Errorf("%w: --codec, --codes and --out are required", errUsage)
	}
	if *window < 0 {
		return fmt.Errorf("%w: --window %d must be positive", errUsage, *window)
	}
	chunk := *from != 0 || *to != 0
	if chunk && *stages != "" {
		return fmt.Errorf("%w: --stages needs a whole decode (no --from/--to)", errUsage)
	}
	if *stages != "" {
		if err := debugcodec.CheckDir("--stages", *stages); err != nil {
			return err
		}
	}

	codec, codes, frames, err := debugcodec.Read(*codecPath, *codesPath, *window)
	if err != nil {
		return err
	}
	g := codec.Geometry()
	if chunk {
		end := *to
		if end == 0 {
			end = frames
		}
		pcm, err := codec.Decode(codes, *from, end, nil)
		if err != nil {
			return fmt.Errorf("codes %s: %w", *codesPath, err)
		}
		return debugcodec.WritePCM(*out, *wav, pcm)
	}
	res, err := codec.DecodeStages(codes)
	if err != nil {
		return fmt.Errorf("codes %s: %w", *codesPath, err)
	}
	if *stages != "" {
		if err := debugcodec.WriteStages(*stages, g.Latent, res.ZRVQ, res.ZPost, res.ZUp); err != nil {
			return err
		}
	}
	return debugcodec.WritePCM(*out, *wav, res.PCM)
}
