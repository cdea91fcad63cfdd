package cpu

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// editedCodec loads tiny-w8's state dict, applies edit to a copy of its
// tensors and loads the codec from the result.
func editedCodec(t *testing.T, edit func(ts *checkpoint.TensorSet) *checkpoint.TensorSet) (*Codec, error) {
	t.Helper()
	ts, err := checkpoint.ReadTorchFile(filepath.Join("testdata", "codec", "tiny-w8", "codec.pth"))
	if err != nil {
		t.Fatal(err)
	}
	return LoadCodec(edit(ts), drama3.CodecOptions{Window: 8})
}

// rebuild copies ts, letting f drop (nil) or replace each tensor.
func rebuild(t *testing.T, ts *checkpoint.TensorSet, f func(*checkpoint.Tensor) *checkpoint.Tensor) *checkpoint.TensorSet {
	out := checkpoint.NewTensorSet()
	for _, n := range ts.Names() {
		if nt := f(ts.Get(n)); nt != nil {
			if err := out.Add(nt); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

func TestCodecLoadRejects(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(*checkpoint.Tensor) *checkpoint.Tensor
		add        *checkpoint.Tensor
	}{
		{"missing tensor", "missing tensor decoder.model.6.conv.bias", func(x *checkpoint.Tensor) *checkpoint.Tensor {
			if x.Name == "decoder.model.6.conv.bias" {
				return nil
			}
			return x
		}, nil},
		{"wrong shape", "quantizer.post_module.layers.1.ffn_norm.weight has shape [127]", func(x *checkpoint.Tensor) *checkpoint.Tensor {
			if x.Name == "quantizer.post_module.layers.1.ffn_norm.weight" {
				return checkpoint.Float32Tensor(x.Name, []int{127}, make([]float32, 127))
			}
			return x
		}, nil},
		{"non-finite", "quantizer.upsample.1.1.gamma holds a non-finite value at element 3", func(x *checkpoint.Tensor) *checkpoint.Tensor {
			if x.Name == "quantizer.upsample.1.1.gamma" {
				v, _ := x.Float32s()
				v[3] = float32(math.Inf(1))
				return checkpoint.Float32Tensor(x.Name, x.Shape, v)
			}
			return x
		}, nil},
		{"unknown module", "does not know: decoder.model.1.block.5.alpha", func(x *checkpoint.Tensor) *checkpoint.Tensor { return x },
			checkpoint.Float32Tensor("decoder.model.1.block.5.alpha", []int{1, 32, 1}, make([]float32, 32))},
	} {
		_, err := editedCodec(t, func(ts *checkpoint.TensorSet) *checkpoint.TensorSet {
			out := rebuild(t, ts, tc.edit)
			if tc.add != nil {
				out.Add(tc.add)
			}
			return out
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestCodecWeightNormSpellings swaps the two weight-norm spellings (the
// decoder's parametrizations become weight_g/weight_v, the quantizers'
// weight_g/weight_v become parametrizations): the decode must not change by
// a bit.
func TestCodecWeightNormSpellings(t *testing.T) {
	f := loadCodecFixtures(t)["tiny-w8"]
	swap := strings.NewReplacer(
		".parametrizations.weight.original0", ".weight_g", ".parametrizations.weight.original1", ".weight_v",
		".weight_g", ".parametrizations.weight.original0", ".weight_v", ".parametrizations.weight.original1")
	renamed, err := editedCodec(t, func(ts *checkpoint.TensorSet) *checkpoint.TensorSet {
		return rebuild(t, ts, func(x *checkpoint.Tensor) *checkpoint.Tensor {
			return &checkpoint.Tensor{Name: swap.Replace(x.Name), DType: x.DType, Shape: x.Shape, Data: x.Data}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := renamed.Decode(f.codes, 0, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := sameBits(got, f.decoded(t).PCM[:4*2048]); !ok {
		t.Errorf("swapped weight-norm spellings decode differently at sample %d", i)
	}
}

func TestCodecCodesConversions(t *testing.T) {
	got, err := CodecCodesFromFrames([][]int{{1, 2}, {3, math.MaxInt32 + 5}, {-1 << 40, 0}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{1, 2, 3, math.MaxInt32, math.MinInt32, 0}; len(got) != 6 || got[3] != want[3] || got[4] != want[4] || got[2] != 3 {
		t.Errorf("frames → %v, want %v", got, want)
	}
	if _, err := CodecCodesFromFrames([][]int{{1, 2}, {3}}, 2); err == nil || !strings.Contains(err.Error(), "frame 1 has 1 codes") {
		t.Errorf("short frame: %v", err)
	}
	// [codebooks, T] (the reference's layout) → frame-major.
	v, nf, err := CodecCodesFromNPY(checkpoint.Int64Tensor("c", []int{2, 3}, []int64{10, 11, 12, 20, 21, 1 << 40}))
	if err != nil || nf != 3 {
		t.Fatal(nf, err)
	}
	if want := []int32{10, 20, 11, 21, 12, math.MaxInt32}; len(v) != 6 || v[0] != want[0] || v[1] != want[1] || v[4] != want[4] || v[5] != want[5] {
		t.Errorf("npy → %v, want %v", v, want)
	}
	if _, _, err := CodecCodesFromNPY(checkpoint.Float32Tensor("c", []int{2, 1}, []float32{1, 2})); err == nil {
		t.Error("float codes accepted")
	}
}

// TestCodecKeyPrefix loads a training-style checkpoint (keys under
// "state_dict.generator.", a discriminator beside it): same decode.
func TestCodecKeyPrefix(t *testing.T) {
	f := loadCodecFixtures(t)["tiny-w8"]
	prefixed, err := editedCodec(t, func(ts *checkpoint.TensorSet) *checkpoint.TensorSet {
		out := rebuild(t, ts, func(x *checkpoint.Tensor) *checkpoint.Tensor {
			return &checkpoint.Tensor{Name: "state_dict.generator." + x.Name, DType: x.DType, Shape: x.Shape, Data: x.Data}
		})
		out.Add(checkpoint.Float32Tensor("state_dict.discriminator.decoder.model.0.conv.bias", []int{1}, []float32{1}))
		return out
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := prefixed.Decode(f.codes, 0, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := sameBits(got, f.decoded(t).PCM[:2*2048]); !ok {
		t.Errorf("prefixed keys decode differently at sample %d", i)
	}

	_, err = editedCodec(t, func(ts *checkpoint.TensorSet) *checkpoint.TensorSet {
		out := rebuild(t, ts, func(x *checkpoint.Tensor) *checkpoint.Tensor { return x })
		out.Add(checkpoint.Float32Tensor("ema."+drama3.CodecAnchor, []int{4096, 8}, make([]float32, 4096*8)))
		return out
	})
	if err == nil || !strings.Contains(err.Error(), "2 codecs") {
		t.Errorf("two codecs: error %v", err)
	}
	_, err = editedCodec(t, func(ts *checkpoint.TensorSet) *checkpoint.TensorSet {
		return rebuild(t, ts, func(x *checkpoint.Tensor) *checkpoint.Tensor {
			if x.Name == drama3.CodecAnchor {
				return nil
			}
			return x
		})
	})
	if err == nil || !strings.Contains(err.Error(), "not a codec state dict") {
		t.Errorf("no codebook: error %v", err)
	}
}
