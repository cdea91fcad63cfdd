package drama3

// The codec's weights as plain data in the forms the backends apply them:
// engine/cpu builds its stages with these packings and exports its loaded
// codec's stage order as a CodecPlan (cpu.Codec.Plan), which engine/cuda
// binds its device weights from; the packings are the one place a PyTorch
// conv weight becomes the evaluation form. Nothing is copied between
// backends: the slices are the loader's own, read-only.

// CodecConvWeights is a causal conv in the reference's evaluation form:
// y[t][o] = Σ_k Σ_c W[o][k][c]·x[t − (Kernel−1−k)·Dilation][c] + Bias[o],
// weight norm folded. A transposed conv is given as its equivalent conv at
// the input rate with stride·out outputs (output channel p·out + o is phase
// p of channel o).
type CodecConvWeights struct {
	In, Out, Kernel, Dilation int
	W                         []float32 // [Out][Kernel][In]
	Bias                      []float32 // [Out]
}

// CodecQuantizerWeights is one codebook and its out_proj.
type CodecQuantizerWeights struct {
	Entries  int
	Codebook []float32 // [Entries][CodebookDim]
	Proj     CodecConvWeights
}

// CodecBlockWeights is one post-module transformer layer (Linear weights
// [out][in]; W1 and W3 [ffn][dim], W2 [dim][ffn]).
type CodecBlockWeights struct {
	Dim, Heads, Window, FFN int
	RopeFreq                []float32 // θ_i, float32 as the reference forms them
	AttnNorm, FFNNorm       []float32
	WQKV, WO, W1, W3, W2    []float32
	GammaAttn, GammaFF      []float32
}

// CodecConvNeXtWeights is one upsample ConvNeXt block.
type CodecConvNeXtWeights struct {
	Ch, Kernel, Hidden int
	DW, DWBias         []float32 // [Ch][Kernel], [Ch]
	NormW, NormB       []float32
	PW1, PW2           CodecConvWeights // kernel-1 convs: Ch→Hidden, Hidden→Ch
	Gamma              []float32
}

// CodecStageKind names what a CodecPlanStage computes.
type CodecStageKind int

const (
	CodecStageBlock     CodecStageKind = iota // post-module transformer layer (Block)
	CodecStageRMSNorm                         // post-module final RMSNorm (Norm)
	CodecStageConv                            // causal conv (Conv), a linear as kernel 1; Tanh after
	CodecStageTransConv                       // transposed conv (Conv at the input rate, Stride, OutCh)
	CodecStageConvNeXt                        // ConvNeXt block (ConvNeXt)
	CodecStageSnake                           // Snake1d (Alpha)
	CodecStageResidual                        // residual unit: x + Conv2(snake(Conv(snake(x)))) (Alpha, Alpha2)
)

// CodecPlanStage is one stage after the RVQ sum, in order. Up and History
// are the stage's rate change and the earlier inputs one output reads.
type CodecPlanStage struct {
	Kind          CodecStageKind
	Label         string // "post", "upsample" or "decoder" (the tap names)
	Up, History   int
	Channels      int // output channels
	Block         *CodecBlockWeights
	Norm          []float32
	Conv, Conv2   *CodecConvWeights
	Tanh          bool
	Stride, OutCh int
	ConvNeXt      *CodecConvNeXtWeights
	Alpha, Alpha2 []float32 // Snake α per channel
}

// CodecPlan is everything a backend needs to decode like the reference.
type CodecPlan struct {
	Geometry CodecGeometry
	Semantic CodecQuantizerWeights
	Residual []CodecQuantizerWeights
	Stages   []CodecPlanStage
}

// PackCodecConv repacks a PyTorch Conv1d weight [out][in][K] (weight norm
// already folded) into the [out][K][in] order of CodecConvWeights.
func PackCodecConv(w []float32, bias []float32, out, in, kernel, dilation int) CodecConvWeights {
	c := CodecConvWeights{In: in, Out: out, Kernel: kernel, Dilation: dilation, W: make([]float32, len(w)), Bias: bias}
	for o := 0; o < out; o++ {
		for ci := 0; ci < in; ci++ {
			for k := 0; k < kernel; k++ {
				c.W[(o*kernel+k)*in+ci] = w[(o*in+ci)*kernel+k]
			}
		}
	}
	return c
}

// PackCodecTransConv turns a PyTorch ConvTranspose1d weight [in][out][K] with
// stride s (K a multiple of s; weight norm folded) and the causal trim of K−s
// samples on the right into an equivalent causal conv at the input rate
// with s·out output channels: output sample n = i·s + p (phase p < s) is
//
//	y[n][o] = Σ_{m<K/s} Σ_c W[c][o][p + m·s] · x[i − m][c] + b[o]
//
// which is channel p·out + o of a causal conv of kernel K/s at input time i.
// In time-major layout the [i][p][o] result is already the [n][o] output.
func PackCodecTransConv(w []float32, bias []float32, in, out, kernel, stride int) CodecConvWeights {
	taps := kernel / stride
	c := CodecConvWeights{In: in, Out: stride * out, Kernel: taps, Dilation: 1,
		W: make([]float32, stride*out*taps*in), Bias: make([]float32, stride*out)}
	for p := 0; p < stride; p++ {
		for o := 0; o < out; o++ {
			oc := p*out + o
			c.Bias[oc] = bias[o]
			for k := 0; k < taps; k++ {
				m := taps - 1 - k // tap k reads input i − m
				for ci := 0; ci < in; ci++ {
					c.W[(oc*taps+k)*in+ci] = w[(ci*out+o)*kernel+p+m*stride]
				}
			}
		}
	}
	return c
}

// PackCodecStridedConv repacks a PyTorch Conv1d weight [out][in][taps·stride]
// (weight norm folded) into its blocked stride-1 equivalent over rows of
// stride·in values (the input viewed as blocks of stride samples):
// weight [out][tap][phase·in + c] = w[out][c][tap·stride + phase].
func PackCodecStridedConv(c CodecConv) CodecConvWeights {
	out, in, kernel, stride := c.Out, c.In, c.Kernel, c.Stride
	taps := kernel / stride
	cc := CodecConvWeights{In: stride * in, Out: out, Kernel: taps, Dilation: 1, W: make([]float32, len(c.W)), Bias: c.Bias}
	for o := 0; o < out; o++ {
		for k := 0; k < taps; k++ {
			for p := 0; p < stride; p++ {
				for ci := 0; ci < in; ci++ {
					cc.W[(o*taps+k)*cc.In+p*in+ci] = c.W[(o*in+ci)*kernel+k*stride+p]
				}
			}
		}
	}
	return cc
}

// CodecEncoderConv is conv c as the CPU applies it: weights [Out][Kernel][In]
// of a causal stride-1 conv; a strided conv (Stride > 1) as its blocked
// equivalent over rows of Stride·In values (PackCodecStridedConv).
func CodecEncoderConv(c CodecConv) CodecConvWeights {
	if c.Stride > 1 {
		return PackCodecStridedConv(c)
	}
	return PackCodecConv(c.W, c.Bias, c.Out, c.In, c.Kernel, c.Dilation)
}
