package checkpoint

import (
	"fmt"
)

// DType names an element type with the safetensors spelling. Tensors read from
// torch .pth files are mapped onto the same names.
type DType string

// The element types the engine reads.
const (
	BF16   DType = "BF16"
	F16    DType = "F16"
	F32    DType = "F32"
	F8E4M3 DType = "F8_E4M3"
	I64    DType = "I64"
	I32    DType = "I32"
	Bool   DType = "BOOL"
)

// Size is the size of one element in bytes, or 0 for an unknown type.
func (d DType) Size() int {
	switch d {
	case F32, I32:
		return 4
	case BF16, F16:
		return 2
	case F8E4M3, Bool:
		return 1
	case I64:
		return 8
	}
	return 0
}

// Known reports whether d is one of the element types above.
func (d DType) Known() bool { return d.Size() != 0 }

// Tensor is one named tensor held in host memory, contiguous, row-major,
// little-endian.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// NumElements is the product of the shape (1 for a scalar).
func (t *Tensor) NumElements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Float32s converts a floating-point tensor to float32 element by element.
// F8_E4M3 values are returned unscaled: block scales are applied by the caller
// (see DequantFP8Blocks).
func (t *Tensor) Float32s() ([]float32, error) {
	n := t.NumElements()
	if len(t.Data) != n*t.DType.Size() {
		return nil, fmt.Errorf("tensor %s: %d bytes for %d elements of %s", t.Name, len(t.Data), n, t.DType)
	}
	out := make([]float32, n)
	switch t.DType {
	case F32:
		for i := range out {
			out[i] = F32FromBytes(t.Data[4*i:])
		}
	case BF16:
		for i := range out {
			out[i] = BF16ToF32(uint16(t.Data[2*i]) | uint16(t.Data[2*i+1])<<8)
		}
	case F16:
		for i := range out {
			out[i] = F16ToF32(uint16(t.Data[2*i]) | uint16(t.Data[2*i+1])<<8)
		}
	case F8E4M3:
		for i := range out {
			out[i] = F8E4M3ToF32(t.Data[i])
		}
	default:
		return nil, fmt.Errorf("tensor %s: %s is not a floating-point type", t.Name, t.DType)
	}
	return out, nil
}
