package cpu

import "golang.org/x/sys/cpu"

// codecHaveAVX2 selects the assembly kernel (it uses AVX and AVX2-era
// 256-bit loads; no FMA, to keep the rounding of codecDot4x2Go).
var codecHaveAVX2 = cpu.X86.HasAVX2

// codecDot4x2AVX2 adds lanes[2j+t][l] += w[j·stride + i]·x_t[i] for i < n8,
// lane l = i mod 8; n8 is a positive multiple of 8.
//
//go:noescape
func codecDot4x2AVX2(w *float32, stride int, x0, x1 *float32, n8 int, lanes *[8][8]float32)
