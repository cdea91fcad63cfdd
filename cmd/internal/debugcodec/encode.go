package debugcodec

import (
	"fmt"
	"path/filepath"
	"strings"

	"proscenium/engine/audio/pcm"
	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// The file side of the debug codec encode, which `proscenium debug encode`
// (CPU) and `proscenium-gpu debug-encode` (CUDA) share.

// ReadAudio reads an encode's input: a float32 .npy of samples or a 44.1 kHz
// WAV, averaged to mono.
func ReadAudio(path string) ([]float32, error) {
	if strings.EqualFold(filepath.Ext(path), ".wav") {
		w, err := pcm.ReadWAVFile(path)
		if err != nil {
			return nil, err
		}
		if w.Rate != pcm.SampleRate {
			return nil, fmt.Errorf("audio %s: %d Hz, the codec takes %d Hz (the voice library resamples; this driver does not)", path, w.Rate, pcm.SampleRate)
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

// WriteEncoding writes an encode to dir in the reference's layouts:
// codes.npy (int64 [codebooks, T]), z_pre.npy (float32 [latent, T]),
// z_enc.npy (float32 [latent, 4T]) and margins.npy (float32 [codebooks, T],
// each pick's best minus second-best cosine similarity).
func WriteEncoding(dir string, g drama3.CodecEncoderGeometry, res *drama3.CodecEncoding) error {
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
		if err := checkpoint.WriteNPYFile(filepath.Join(dir, t.Name+".npy"), t); err != nil {
			return err
		}
	}
	return nil
}
