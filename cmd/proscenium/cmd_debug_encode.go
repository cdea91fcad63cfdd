package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"proscenium/engine/audio"
	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

func init() {
	registerDebug(command{name: "encode", summary: "CPU codec encode of 44.1 kHz audio (.npy or .wav) to codes [10, T] and z_pre [latent, T] (.npy)", run: runDebugEncode})
}

// runDebugEncode encodes audio with the CPU reference codec encoder and
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
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *codecPath == "" || *audioPath == "" || *out == "" {
		return fmt.Errorf("%w: --codec, --audio and --out are required", errUsage)
	}
	if *window < 0 {
		return fmt.Errorf("%w: --window %d must be positive", errUsage, *window)
	}
	if st, err := os.Stat(*out); err != nil || !st.IsDir() {
		return fmt.Errorf("--out %s is not a directory", *out)
	}
	pcm, err := readEncodeAudio(*audioPath)
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
	g := enc.Geometry()
	nb, nf := g.Codebooks, res.Frames
	codes := make([]int64, nb*nf)
	margins := make([]float32, nb*nf)
	for f := 0; f < nf; f++ {
		for i := 0; i < nb; i++ {
			codes[i*nf+f] = int64(res.Codes[f*nb+i])
			margins[i*nf+f] = res.Margins[f*nb+i]
		}
	}
	for _, t := range []*checkpoint.Tensor{
		checkpoint.Int64Tensor("codes", []int{nb, nf}, codes),
		checkpoint.Float32Tensor("z_pre", []int{g.Latent, nf}, res.ZPre),
		checkpoint.Float32Tensor("z_enc", []int{g.Latent, len(res.ZEnc) / g.Latent}, res.ZEnc),
		checkpoint.Float32Tensor("margins", []int{nb, nf}, margins),
	} {
		if err := checkpoint.WriteNPYFile(filepath.Join(*out, t.Name+".npy"), t); err != nil {
			return err
		}
	}
	return nil
}

// readEncodeAudio reads the driver's input: a float32 .npy of samples or a
// 44.1 kHz WAV, averaged to mono.
func readEncodeAudio(path string) ([]float32, error) {
	if strings.EqualFold(filepath.Ext(path), ".wav") {
		w, err := audio.ReadWAVFile(path)
		if err != nil {
			return nil, err
		}
		if w.Rate != audio.SampleRate {
			return nil, fmt.Errorf("audio %s: %d Hz, the codec takes %d Hz (the voice library resamples; this driver does not)", path, w.Rate, audio.SampleRate)
		}
		mono := make([]float32, len(w.Samples)/w.Channels)
		for i := range mono {
			var s float32
			for c := 0; c < w.Channels; c++ {
				s += w.Samples[i*w.Channels+c]
			}
			mono[i] = s / float32(w.Channels)
		}
		return mono, nil
	}
	t, err := checkpoint.ReadNPYFile(path)
	if err != nil {
		return nil, err
	}
	if len(t.Shape) != 1 {
		return nil, fmt.Errorf("audio %s: shape %v, want [samples]", path, t.Shape)
	}
	return t.Float32s()
}
