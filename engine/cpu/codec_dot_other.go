//go:build !amd64

package cpu

var codecHaveAVX2 = false

func codecDot4x2AVX2(w *float32, stride int, x0, x1 *float32, n8 int, lanes *[8][8]float32) {
	panic("codecDot4x2AVX2 without amd64")
}
