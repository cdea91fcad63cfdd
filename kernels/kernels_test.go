//go:build cuda

package kernels

import (
	"encoding/binary"
	"strings"
	"testing"
)

// fatbinMagic is the first word of every fatbin nvcc writes (fatbinary.h).
const fatbinMagic = 0xBA55ED50

func TestGenericFatbinsEmbedded(t *testing.T) {
	mods := Modules()
	if len(mods) == 0 {
		t.Fatal("no kernel modules embedded; run make kernels")
	}
	for _, m := range mods {
		b := Generic(m)
		if len(b) < 16 {
			t.Fatalf("%s.fatbin: %d bytes embedded; run make kernels", m, len(b))
		}
		if w := binary.LittleEndian.Uint32(b); w != fatbinMagic {
			t.Fatalf("%s.fatbin starts with %#x, want fatbin magic %#x", m, w, fatbinMagic)
		}
	}
	if Generic("no-such-module") != nil {
		t.Fatal("a missing module returned bytes")
	}
}

func TestSM90aMatchesBuildInfo(t *testing.T) {
	info := BuildInfo()
	if !strings.Contains(info, "nvcc:") {
		t.Fatalf("build info %q names no nvcc", info)
	}
	built := strings.Contains(info, "sm_90a: built")
	for _, m := range Modules() {
		if got := SM90a(m) != nil; got != built {
			t.Fatalf("%s: sm_90a fatbin present = %v, build info says %q", m, got, info)
		}
		if b := SM90a(m); b != nil && binary.LittleEndian.Uint32(b) != fatbinMagic {
			t.Fatalf("%s_sm90a.fatbin is not a fatbin", m)
		}
	}
}
