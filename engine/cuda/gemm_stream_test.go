package cuda

import (
	"strings"
	"testing"

	"proscenium/engine/cuda/kernel"
)

func TestChooseGemmStream(t *testing.T) {
	for _, c := range []struct {
		v             string
		pairs, groups int
		want          kernel.GemmStreamFP8Kernel
		ok            bool
	}{
		{"", 60 * 8, 256, kernel.GemmStreamFP8N8c4, true},   // 1.9 an expert
		{"", 300 * 8, 256, kernel.GemmStreamFP8N16c2, true}, // 9.4
		{"on", 700 * 8, 256, kernel.GemmStreamFP8N32c1, true},
		{"on", 2048 * 8, 256, kernel.GemmStreamFP8N32c1, true}, // more: further passes
		{"on", 128 * 8, 256, kernel.GemmStreamFP8N8c4, true},   // 4 + 3 = 7
		{"on", 160 * 8, 256, kernel.GemmStreamFP8N16c2, true},  // 5 + 3.4
		{"on", 400 * 8, 256, kernel.GemmStreamFP8N24c2, true},  // 12.5 + 5.3
		{"24c2", 60 * 8, 256, kernel.GemmStreamFP8N24c2, true},
		{"off", 300 * 8, 256, "", false},
		{"12", 300 * 8, 256, "", false},
		{"16", 300 * 8, 256, "", false},
		{"ring", 300 * 8, 256, "", false},
	} {
		got, ok := ChooseGemmStream(c.v, c.pairs, c.groups)
		if got != c.want || ok != c.ok {
			t.Errorf("ChooseGemmStream(%q, %d, %d) = %q, %v; want %q, %v", c.v, c.pairs, c.groups, got, ok, c.want, c.ok)
		}
	}
}

func TestGemmStreamSetting(t *testing.T) {
	for _, v := range []string{"", "on", "off", "8c4", "16c2", "24c2", "32c1"} {
		if err := GemmStreamSetting(v); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	for _, v := range []string{"yes", "12", "64", " on", "16", "32c2", "c", "16c2r"} {
		err := GemmStreamSetting(v)
		if err == nil || !strings.Contains(err.Error(), GemmStreamEnv) {
			t.Errorf("%q: error %v, want one naming %s", v, err, GemmStreamEnv)
		}
	}
	for _, v := range []string{"", "on", "off"} {
		if err := GemmStreamSwiGLUSetting(v); err != nil {
			t.Errorf("swiglu %q: %v", v, err)
		}
	}
	if err := GemmStreamSwiGLUSetting("yes"); err == nil || !strings.Contains(err.Error(), GemmStreamSwiGLUEnv) {
		t.Errorf("swiglu \"yes\": error %v, want one naming %s", err, GemmStreamSwiGLUEnv)
	}
}

// gemmStreamPiece restates kernels/gemm_stream.cu gemm_stream_piece: the
// 16-byte piece of a part that holds the 128-column block's columns
// 8·k8 … 8·k8+7.
func gemmStreamPiece(k8 int) int { return (2*(k8>>3)+(k8&1))*4 + (k8&7)>>1 }

// TestGemmStreamLayout restates the streamed kernel's index arithmetic on
// the host: for every lane quad tq, MMA j of a 128-column step and k slot
// kk (0, 1: the MMA's k 2tq, 2tq+1; 2, 3: 2tq+8, 2tq+9), the W byte the
// lane's A register holds (piece j/4 of its two 16-byte loads, word j%4,
// byte kk) and the X element its B register holds (piece 4·(j/2) + tq of
// the part gemm_stream_prep wrote, element 4·(j%2) + kk) are the same
// column, and the prep's pieces are a permutation: so every product the
// MMAs sum is w[c]·x[c], each c once. A layout whose two sides disagree
// (the prep's pieces unpermuted, or the B piece taken as 4·tq + j/2) fails.
func TestGemmStreamLayout(t *testing.T) {
	seen := map[int]bool{}
	for k8 := 0; k8 < 16; k8++ {
		p := gemmStreamPiece(k8)
		if p < 0 || p >= 16 || seen[p] {
			t.Fatalf("piece of columns %d…%d is %d: not a permutation of 0…15", 8*k8, 8*k8+7, p)
		}
		seen[p] = true
	}
	col := make([]int, 16*8) // (piece, element) → column, as the prep writes
	for c := 0; c < 128; c++ {
		col[gemmStreamPiece(c/8)*8+c%8] = c
	}
	used := map[int]int{}
	for tq := 0; tq < 4; tq++ {
		for j := 0; j < 8; j++ {
			for kk := 0; kk < 4; kk++ {
				wcol := (j>>2)*64 + 16*tq + (j&3)*4 + kk
				xcol := col[(4*(j>>1)+tq)*8+4*(j&1)+kk]
				if wcol != xcol {
					t.Errorf("lane quad %d, MMA %d, k slot %d: A holds column %d, B column %d", tq, j, kk, wcol, xcol)
				}
				used[wcol]++
			}
		}
	}
	for c := 0; c < 128; c++ {
		if used[c] != 1 {
			t.Errorf("column %d is summed %d times", c, used[c])
		}
	}
}

// TestGemmStreamScratchBytes: the scratch holds each X row's 128-column
// blocks, two FP16 parts and a scale each; the grouped path's XRep (the
// per-pair path's replicated rows) holds a full-geometry pass's.
func TestGemmStreamScratchBytes(t *testing.T) {
	if got := GemmStreamScratchBytes(300, 2048); got != 300*16*516 {
		t.Errorf("300 rows of 2048: %d bytes", got)
	}
	if got := GemmStreamScratchBytes(7, 144); got != 7*2*516 {
		t.Errorf("7 rows of 144: %d bytes", got)
	}
	const chunk, k, hp, ip = 2048, 8, 2048, 512
	xrep := int64(chunk * k * hp * 4)
	if GemmStreamScratchBytes(chunk, hp) > xrep || GemmStreamScratchBytes(chunk*k, ip) > xrep {
		t.Errorf("a full-geometry pass's parts do not fit its XRep (%d bytes)", xrep)
	}
}

// TestGemmStreamShared: every instance's block fits an H200 SM's shared
// memory as many times as its launch bounds ask (two; 228 KB an SM), its
// static row tables beside it.
func TestGemmStreamShared(t *testing.T) {
	for _, k := range kernel.GemmStreamFP8Kernels {
		nt, ok := gemmStreamNT[k]
		if !ok {
			t.Fatalf("%s: no n-tiles", k)
		}
		const blocks = 2
		b := GemmStreamShared(k) + 2*4*8*nt + 1024 // dynamic, the row tables, the 1 KB the SM reserves a block
		if b*blocks > 228*1024 {
			t.Errorf("%s: %d bytes a block, %d blocks an SM: past 228 KB", k, b, blocks)
		}
	}
}

func TestSetPrefillSwitch(t *testing.T) {
	defer func(v, s string) { deltaNetPrep, gemmSplitK = v, s }(deltaNetPrep, gemmSplitK)
	if err := SetPrefillSwitch(DeltaNetPrepEnv, "old"); err != nil || deltaNetPrep != "old" {
		t.Errorf("set %s=old: %v, the variable %q", DeltaNetPrepEnv, err, deltaNetPrep)
	}
	if err := CheckPrefillSwitch(DeltaNetPrepEnv, "tiled"); err != nil || deltaNetPrep != "old" {
		t.Errorf("check %s=tiled: %v, the variable %q (want no error, unchanged)", DeltaNetPrepEnv, err, deltaNetPrep)
	}
	if err := SetPrefillSwitch(DeltaNetPrepEnv, "new"); err == nil || deltaNetPrep != "old" {
		t.Errorf("set %s=new: %v, the variable %q (want an error, unchanged)", DeltaNetPrepEnv, err, deltaNetPrep)
	}
	gemmSplitK = "on"
	if err := SetPrefillSwitch(GemmSplitKEnv, "0"); err == nil || gemmSplitK != "on" {
		t.Errorf("set %s=0: %v, the variable %q (want an error, unchanged)", GemmSplitKEnv, err, gemmSplitK)
	}
	if err := SetPrefillSwitch(GemmSplitKEnv, "3"); err != nil || gemmSplitK != "3" {
		t.Errorf("set %s=3: %v, the variable %q", GemmSplitKEnv, err, gemmSplitK)
	}
	if err := SetPrefillSwitch("PROSCENIUM_GPU_NONE", "on"); err == nil || !strings.Contains(err.Error(), DeltaNetPrepEnv) {
		t.Errorf("an unknown switch: %v, want an error listing the switches", err)
	}
}
