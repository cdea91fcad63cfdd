//go:build cuda

package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"proscenium/cmd/internal/debugcodec"
	"proscenium/engine/audio/pcm"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// debug-encode: the CUDA form of `proscenium debug encode` (same arguments
// and outputs), which forwards here with --backend cuda. It reports the
// encode's wall time on stderr (the second of two encodes: the first loads
// the kernels).

func init() {
	registerTool(tool{name: "debug-encode", summary: "GPU codec encode of 44.1 kHz audio to codes [10, T] and z_pre (.npy), as `proscenium debug encode`", run: runDebugEncode})
}

func runDebugEncode(args []string) error {
	fs := flag.NewFlagSet("proscenium-gpu debug-encode", flag.ContinueOnError)
	codecPath := fs.String("codec", "", "codec.pth with its encoder (required)")
	audioPath := fs.String("audio", "", "audio: float32 .npy [samples] or .wav, 44.1 kHz (required)")
	window := fs.Int("window", 0, "pre-module attention window in frames (0: the codec's)")
	out := fs.String("out", "", "output directory for codes.npy, z_pre.npy, z_enc.npy and margins.npy (required)")
	ordinal := fs.Int("device", 0, "CUDA device ordinal")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := (debugcodec.EncodeArgs{Codec: *codecPath, Audio: *audioPath, Out: *out, Window: *window}).Check(nil); err != nil {
		return err
	}
	clip, err := debugcodec.ReadAudio(*audioPath)
	if err != nil {
		return err
	}
	w, err := drama3.ReadCodecEncoderFile(*codecPath, drama3.CodecOptions{Window: *window})
	if err != nil {
		return err
	}
	dev, err := cuda.Open(*ordinal, 0, 0)
	if err != nil {
		return err
	}
	defer dev.Close()
	enc, err := cuda.NewCodecEncoder(dev, w)
	if err != nil {
		return err
	}
	defer enc.Close()
	if _, err := enc.Encode(clip); err != nil {
		return fmt.Errorf("audio %s: %w", *audioPath, err)
	}
	t0 := time.Now()
	res, err := enc.Encode(clip)
	if err != nil {
		return fmt.Errorf("audio %s: %w", *audioPath, err)
	}
	el, sec := time.Since(t0).Seconds(), float64(len(clip))/pcm.SampleRate
	fmt.Fprintf(os.Stderr, "encoded %.2f s of audio (%d frames) in %.4f s on %s: %.5f GPU s per audio s\n", sec, res.Frames, el, dev.Info.Name, el/sec)
	return debugcodec.WriteEncoding(*out, enc.Geometry(), res)
}
