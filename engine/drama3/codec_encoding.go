package drama3

import (
	"fmt"
	"math"
)

// The encoder's shared pieces: the checks of its input, its result, and the
// codebook normalisation of its nearest-code search (engine/cpu encodes with
// them, engine/cuda's encoder uploads the normalised codebooks).

// CodecEncoding is the result of an encode.
type CodecEncoding struct {
	Frames int
	// Codes are frame-major, as Decode takes them: code i of frame f at
	// Codes[f·Codebooks+i].
	Codes []int32
	// Margins are frame-major like Codes: each pick's best minus
	// second-best cosine similarity (a pick with a tiny margin may flip
	// under float32 reordering).
	Margins []float32
	// ZEnc [Latent][frames·downsampling] and ZPre [Latent][Frames] are the
	// encoder and pre-module outputs, channel-major as the reference lays
	// them out.
	ZEnc, ZPre []float32
}

// CodecMaxEncodeFrames bounds one encode: the pre-module's RoPE table.
const CodecMaxEncodeFrames = CodecMaxFrames

// CodecEncodeFrames checks audio for an encode (not empty, every sample
// finite, at most CodecMaxEncodeFrames frames) and returns its frames of spf
// samples, the last padded: the checks every encoder makes.
func CodecEncodeFrames(audio []float32, spf int) (int, error) {
	if len(audio) == 0 {
		return 0, fmt.Errorf("codec: no audio to encode")
	}
	for i, v := range audio {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0, fmt.Errorf("codec: audio sample %d is not finite", i)
		}
	}
	frames := (len(audio) + spf - 1) / spf
	if frames > CodecMaxEncodeFrames {
		return 0, fmt.Errorf("codec: %d frames of audio is past the reference's RoPE table of %d frames", frames, CodecMaxEncodeFrames)
	}
	return frames, nil
}

// CodecUnitCodebook returns the rows of a codebook [entries][dim] each
// L2-normalised as the encoder's nearest-code search compares them.
func CodecUnitCodebook(codebook []float32, dim int) []float32 {
	unit := make([]float32, len(codebook))
	for r := 0; r+dim <= len(codebook); r += dim {
		CodecNormalize(unit[r:r+dim], codebook[r:r+dim])
	}
	return unit
}

// CodecNormalize is F.normalize: x / max(‖x‖, 1e-12), in float32.
func CodecNormalize(dst, x []float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	n := float32(max(math.Sqrt(ss), 1e-12))
	for i, v := range x {
		dst[i] = v / n
	}
}
