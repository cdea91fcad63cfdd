package main

import (
	"fmt"

	"proscenium/cmd/internal/debugcodec"
	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

func init() {
	registerDebug(command{name: "encode", summary: "codec encode of 44.1 kHz audio (.npy or .wav) to codes [10, T] and z_pre [latent, T] (.npy), on the CPU or (--backend cuda) the GPU", run: runDebugEncode})
}

// runDebugEncode encodes audio with the CPU reference codec encoder (or,
// --backend cuda, the GPU worker's debug-encode with the same arguments) and
// writes codes.npy (int64 [codebooks, T]), z_pre.npy (float32 [latent, T],
// after downsample and pre-module), z_enc.npy (float32 [latent, 4T], the
// encoder's output) and margins.npy (float32 [codebooks, T], each pick's best
// minus second-best cosine similarity) to --out, the reference's layouts.
// The audio is a float32 .npy [N] at 44.1 kHz or a 44.1 kHz WAV (channels
// averaged to mono).
func runDebugEncode(args []string) error {
	fs := newFlags("debug encode")
	codecPath := fs.String("codec", "", "codec.pth with its encoder (torch state dict of the S2 codec) (required)")
	audioPath := fs.String("audio", "", "audio: float32 .npy [samples] or .wav, 44.1 kHz (required)")
	window := fs.Int("window", 0, fmt.Sprintf("pre-module attention window in frames (0: the codec's %d)", drama3.CodecDefaultWindow))
	out := fs.String("out", "", "output directory for codes.npy, z_pre.npy, z_enc.npy and margins.npy (required)")
	backend := debugBackendFlags(fs, "debug-encode")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if done, err := backend.forward(); done {
		return err
	}
	if err := (debugcodec.EncodeArgs{Codec: *codecPath, Audio: *audioPath, Out: *out, Window: *window}).Check(errUsage); err != nil {
		return err
	}
	pcm, err := debugcodec.ReadAudio(*audioPath)
	if err != nil {
		return err
	}
	enc, err := cpu.LoadCodecEncoderFile(*codecPath, drama3.CodecOptions{Window: *window})
	if err != nil {
		return err
	}
	res, err := enc.Encode(pcm)
	if err != nil {
		return fmt.Errorf("audio %s: %w", *audioPath, err)
	}
	return debugcodec.WriteEncoding(*out, enc.Geometry(), res)
}
