package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Flags that take a size in bytes, such as 30GiB:
//
// --memory-cap on synth, serve, bench, inspect and gpu probe: the settings'
// memory cap (memory_cap_bytes) for one run. On the GPU it is the device
// budget: a model larger than it keeps routed experts in host memory
// (engine/cuda PlanTier), and one whose dense part passes it is refused.
//
// --voice-cache on serve, inspect and gpu probe: the settings' voice cache
// (voice_cache_bytes) for one run: the most memory the engine keeps
// voices' states in (open.Options.VoiceCacheBytes).

// sizeFlag is a flag.Value holding a byte count; set says it was given.
type sizeFlag struct {
	bytes int64
	set   bool
}

func memoryCapFlag(fs *flag.FlagSet) *sizeFlag {
	c := &sizeFlag{}
	fs.Var(c, "memory-cap", "memory cap for this run, e.g. 30GiB, 24GB or bytes (0: none; serve: default the settings' memory_cap_bytes); "+
		"on the GPU it is the device budget: a larger model keeps the routed experts of its last layers in pinned host memory")
	return c
}

func voiceCacheFlag(fs *flag.FlagSet) *sizeFlag {
	c := &sizeFlag{}
	fs.Var(c, "voice-cache", "the most memory cloned voices' states are kept in, so that a take in a voice starts from it, e.g. 2GiB "+
		"(0: automatic, 512 MiB or on a GPU with room an eighth of the memory left beside the model (host memory where experts live there), up to 8 GiB; "+
		"serve: default the settings' voice_cache_bytes); on the GPU device memory left beside the model, pinned host memory when experts live there")
	return c
}

func (c *sizeFlag) String() string {
	if c == nil || !c.set {
		return ""
	}
	return strconv.FormatInt(c.bytes, 10)
}

func (c *sizeFlag) Set(s string) error {
	n, err := parseByteSize(s)
	if err != nil {
		return err
	}
	c.bytes, c.set = n, true
	return nil
}

// or is the size given, else def.
func (c *sizeFlag) or(def int64) int64 {
	if c.set {
		return c.bytes
	}
	return def
}

var byteUnits = []struct {
	suffix string
	scale  float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// parseByteSize reads a size: a number (decimals allowed) and a unit
// (B, KB/MB/GB/TB powers of 1000, KiB/MiB/GiB/TiB powers of 1024), or a
// whole number of bytes.
func parseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	for _, u := range byteUnits {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			t, scale = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.scale
			break
		}
	}
	if scale == 1 {
		if n, err := strconv.ParseInt(t, 10, 64); err == nil && n >= 0 {
			return n, nil
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v*scale >= math.MaxInt64/2 || strings.ContainsAny(t, "xXpPeEiInN_") {
		return 0, fmt.Errorf("size %q: want a size such as 30GiB, 24GB or a number of bytes", s)
	}
	return int64(v * scale), nil
}
