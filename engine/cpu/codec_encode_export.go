package cpu

import "proscenium/engine/drama3"

// The encoder's weights in the forms the CPU applies them, for device
// backends that build their encoder from drama3.CodecEncoderWeights
// (engine/cuda codec_encoder_cuda.go): one packing, one codebook normalisation
// for both (the RoPE table: drama3.CodecRopeTable).

// CodecEncoderConv is conv c as the CPU applies it: weights [Out][Kernel][In]
// of a causal stride-1 conv; a strided conv (Stride > 1) as its blocked
// equivalent over rows of Stride·In values (the input viewed as blocks of
// Stride samples; stridedConvStep).
func CodecEncoderConv(c drama3.CodecConv) CodecConvWeights {
	if c.Stride > 1 {
		return newCodecStridedConv(c).export()
	}
	return newCodecConv(c.W, c.Bias, c.Out, c.In, c.Kernel, c.Dilation).export()
}

// CodecUnitCodebook returns the rows of a codebook [entries][dim] each
// L2-normalised as the encoder's nearest-code search compares them.
func CodecUnitCodebook(codebook []float32, dim int) []float32 {
	unit := make([]float32, len(codebook))
	for r := 0; r+dim <= len(codebook); r += dim {
		codecNormalize(unit[r:r+dim], codebook[r:r+dim])
	}
	return unit
}
