package model

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMemTotalFrom(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		text string
		want int64
	}{
		{"MemTotal:       16318480 kB\nMemFree:  1 kB\n", 16318480 << 10},
		{"MemFree: 1 kB\nMemTotal: 2 kB\n", 2048},
		{"MemTotal: 12 MB\n", 0},
		{"MemTotal: -3 kB\n", 0},
		{"MemTotal: lots kB\n", 0},
		{"", 0},
	} {
		p := filepath.Join(dir, "meminfo")
		os.WriteFile(p, []byte(c.text), 0o644)
		if got := memTotalFrom(p); got != c.want {
			t.Errorf("%q: %d, want %d", c.text, got, c.want)
		}
	}
	if got := memTotalFrom(filepath.Join(dir, "absent")); got != 0 {
		t.Errorf("absent file: %d", got)
	}
}
