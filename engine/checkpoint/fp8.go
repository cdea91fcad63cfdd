package checkpoint

import "fmt"

// FP8 checkpoints (DeepSeek-V3 style, as Qwen3.5 FP8 releases use) store a
// weight "<name>" as F8_E4M3 [rows, cols] and its block scales as
// "<name>_scale_inv" (F32, or BF16) [ceil(rows/block), ceil(cols/block)];
// the real weight is fp8 × scale_inv block by block.

// ScaleInvSuffix names a weight's block-scale tensor.
const ScaleInvSuffix = "_scale_inv"

// FP8Scale returns the block-scale tensor paired with the F8_E4M3 weight
// called name.
func (ix *Index) FP8Scale(name string) (TensorInfo, bool) {
	return ix.Lookup(name + ScaleInvSuffix)
}

// ReadDequantFP8 reads an F8_E4M3 weight and its "_scale_inv" block scales
// and returns the dequantised F32 tensor.
func (ix *Index) ReadDequantFP8(name string, block int) (*Tensor, error) {
	w, err := ix.ReadTensor(name)
	if err != nil {
		return nil, err
	}
	s, err := ix.ReadTensor(name + ScaleInvSuffix)
	if err != nil {
		return nil, fmt.Errorf("FP8 weight %s: %w", name, err)
	}
	v, err := DequantFP8Tensor(w, s, block)
	if err != nil {
		return nil, err
	}
	return Float32Tensor(name, w.Shape, v), nil
}

// DequantFP8Tensor checks that w is an F8_E4M3 matrix and scale its
// [ceil(rows/block), ceil(cols/block)] F32/BF16 block-scale table, and
// returns w × scale as float32, row-major.
func DequantFP8Tensor(w, scale *Tensor, block int) ([]float32, error) {
	if w.DType != F8E4M3 || len(w.Shape) != 2 {
		return nil, fmt.Errorf("tensor %s: %s %v, want a 2-D F8_E4M3 matrix", w.Name, w.DType, w.Shape)
	}
	if block <= 0 {
		return nil, fmt.Errorf("tensor %s: block size %d", w.Name, block)
	}
	rows, cols := w.Shape[0], w.Shape[1]
	want := []int{(rows + block - 1) / block, (cols + block - 1) / block}
	if len(scale.Shape) != 2 || scale.Shape[0] != want[0] || scale.Shape[1] != want[1] {
		return nil, fmt.Errorf("tensor %s: scale shape %v, want %v for %d×%d with %d-blocks", scale.Name, scale.Shape, want, rows, cols, block)
	}
	if len(w.Data) != rows*cols {
		return nil, fmt.Errorf("tensor %s: %d bytes for %d×%d", w.Name, len(w.Data), rows, cols)
	}
	if scale.DType != F32 && scale.DType != BF16 {
		return nil, fmt.Errorf("tensor %s: scale dtype %s, want F32 or BF16", scale.Name, scale.DType)
	}
	s, err := scale.Float32s()
	if err != nil {
		return nil, err
	}
	return DequantFP8Blocks(w.Data, rows, cols, s, block), nil
}
