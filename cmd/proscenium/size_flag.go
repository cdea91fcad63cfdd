package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// --memory-cap on synth, serve and bench: the settings' memory cap
// (memory_cap_bytes) for one run, as a size such as 30GiB. On the GPU it is
// the device budget: a model larger than it keeps routed experts in host
// memory (engine/cuda PlanTier), and one whose dense part passes it is refused.

// memoryCap is a flag.Value holding a byte count; set says it was given.
type memoryCap struct {
	bytes int64
	set   bool
}

func memoryCapFlag(fs *flag.FlagSet) *memoryCap {
	c := &memoryCap{}
	fs.Var(c, "memory-cap", "memory cap for this run, e.g. 30GiB, 24GB or bytes (0: none; serve: default the settings' memory_cap_bytes); "+
		"on the GPU it is the device budget: a larger model keeps the routed experts of its last layers in pinned host memory")
	return c
}

func (c *memoryCap) String() string {
	if c == nil || !c.set {
		return ""
	}
	return strconv.FormatInt(c.bytes, 10)
}

func (c *memoryCap) Set(s string) error {
	n, err := parseByteSize(s)
	if err != nil {
		return err
	}
	c.bytes, c.set = n, true
	return nil
}

// or is the cap given, else def.
func (c *memoryCap) or(def int64) int64 {
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
		return 0, fmt.Errorf("memory cap %q: want a size such as 30GiB, 24GB or a number of bytes", s)
	}
	return int64(v * scale), nil
}
