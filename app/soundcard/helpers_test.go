package soundcard

import "math"

// testSPF is the codec's samples per frame.
const testSPF = 2048

// testSignal is sample i of the test take: never zero, inside (−1, 1).
func testSignal(i int) float32 {
	return float32(0.5*math.Sin(float64(i)*0.01) + 0.25*math.Copysign(1, math.Sin(float64(i)*0.003)+1e-9))
}

func decodeFloat32LE(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out
}
