//go:build cuda

package kernels

import (
	"encoding/binary"
	"strings"
	"testing"
)

// fatbinMagic is the first word of every fatbin nvcc writes (fatbinary.h).
const fatbinMagic = 0xBA55ED50

func TestGenericFatbinEmbedded(t *testing.T) {
	b := Generic("ops")
	if len(b) < 16 {
		t.Fatalf("ops.fatbin: %d bytes embedded; run make kernels", len(b))
	}
	if m := binary.LittleEndian.Uint32(b); m != fatbinMagic {
		t.Fatalf("ops.fatbin starts with %#x, want fatbin magic %#x", m, fatbinMagic)
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
	if got := SM90a("ops") != nil; got != built {
		t.Fatalf("sm_90a fatbin present = %v, build info says %q", got, info)
	}
	if b := SM90a("ops"); b != nil && binary.LittleEndian.Uint32(b) != fatbinMagic {
		t.Fatal("ops_sm90a.fatbin is not a fatbin")
	}
}
