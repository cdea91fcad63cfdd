// Package debugcodec holds the file side of the debug codec drivers that
// `proscenium debug decode` and `debug encode` (CPU) and `proscenium-gpu
// debug-decode` and `debug-encode` (CUDA) run: reading the codec, the codes
// and the audio, writing the stages, the PCM and the encodings. It is
// untagged so that both binaries share it.
package debugcodec

import (
	"fmt"
	"path/filepath"

	"proscenium/engine/audio/pcm"
	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// Read loads the codec.pth at codecPath (post-module window as given, 0:
// the codec's) and the codes .npy at codesPath, whose shape must be
// [codebooks, frames] for that codec; it returns the codes frame-major and
// the number of frames.
func Read(codecPath, codesPath string, window int) (*cpu.Codec, []int32, int, error) {
	codec, err := cpu.LoadCodecFile(codecPath, drama3.CodecOptions{Window: window})
	if err != nil {
		return nil, nil, 0, err
	}
	ct, err := checkpoint.ReadNPYFile(codesPath)
	if err != nil {
		return nil, nil, 0, err
	}
	g := codec.Geometry()
	if len(ct.Shape) != 2 || ct.Shape[0] != g.Codebooks() {
		return nil, nil, 0, fmt.Errorf("codes %s: shape %v, want [%d, frames]", codesPath, ct.Shape, g.Codebooks())
	}
	codes, frames, err := cpu.CodecCodesFromNPY(ct)
	if err != nil {
		return nil, nil, 0, err
	}
	return codec, codes, frames, nil
}

// WriteStages writes the stage outputs z_rvq, z_post and z_up, channel-major
// [latent, T], as .npy files in dir.
func WriteStages(dir string, latent int, zRVQ, zPost, zUp []float32) error {
	for _, s := range []struct {
		name string
		v    []float32
	}{{"z_rvq", zRVQ}, {"z_post", zPost}, {"z_up", zUp}} {
		shape := []int{latent, len(s.v) / latent}
		if err := checkpoint.WriteNPYFile(filepath.Join(dir, s.name+".npy"), checkpoint.Float32Tensor(s.name, shape, s.v)); err != nil {
			return err
		}
	}
	return nil
}

// WritePCM writes samples as a 44.1 kHz float32 WAV at wav (when not empty) and
// as a float32 .npy at out.
func WritePCM(out, wav string, samples []float32) error {
	if wav != "" {
		if err := pcm.WriteWAV(wav, samples, pcm.SampleRate, pcm.Float32); err != nil {
			return err
		}
	}
	return checkpoint.WriteNPYFile(out, checkpoint.Float32Tensor("pcm", []int{len(samples)}, samples))
}
