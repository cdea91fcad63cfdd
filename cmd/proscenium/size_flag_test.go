package main

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestParseByteSize(t *testing.T) {
	good := map[string]int64{"30GiB": 30 << 30, "22 GiB": 22 << 30, "24GB": 24e9, "1.5GiB": 3 << 29, "512MiB": 512 << 20,
		"0": 0, "123456": 123456, "7b": 7, "2kib": 2048}
	for s, want := range good {
		if n, err := parseByteSize(s); err != nil || n != want {
			t.Errorf("%q: %d %v, want %d", s, n, err, want)
		}
	}
	for _, s := range []string{"", "GiB", "-1GiB", "-5", "1e3GiB", "0x10", "NaN", "Inf GiB", "30 GiBs", "9999999999TiB", "1_000"} {
		if n, err := parseByteSize(s); err == nil {
			t.Errorf("%q: %d, want an error", s, n)
		}
	}
}

func TestSizeFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	c := memoryCapFlag(fs)
	if c.or(5) != 5 {
		t.Error("unset cap: not the default")
	}
	if err := fs.Parse([]string{"--memory-cap", "22GiB"}); err != nil || c.or(5) != 22<<30 {
		t.Errorf("%v %d", err, c.or(5))
	}
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	c = memoryCapFlag(fs)
	if err := fs.Parse([]string{"--memory-cap", "0"}); err != nil || c.or(5) != 0 {
		t.Errorf("a zero cap given: %v %d", err, c.or(5))
	}
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	v := voiceCacheFlag(fs)
	if err := fs.Parse([]string{"--voice-cache", "2GiB"}); err != nil || v.or(5) != 2<<30 {
		t.Errorf("--voice-cache 2GiB: %v %d", err, v.or(5))
	}
	if err := fs.Parse([]string{"--voice-cache", "lots"}); err == nil || !strings.Contains(err.Error(), `size "lots": want a size such as 30GiB`) {
		t.Errorf("--voice-cache lots: %v, want the size refused by name", err)
	}
}

func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"30GiB", "1.5 GB", "12", "-1", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := parseByteSize(s); err == nil && n < 0 {
			t.Fatalf("%q: %d", s, n)
		}
	})
}
