package debugcodec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// debug encode's one argument check: the CPU (usage = its errUsage) and the
// GPU worker (usage = nil) refuse the same command lines with the same
// words; a missing --out is refused by both, never created. Broken once:
// an os.MkdirAll in Check made the missing-directory case pass and left the
// directory behind.
func TestEncodeArgsCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	missing := filepath.Join(dir, "none")
	usage := errors.New("usage")
	for _, c := range []struct {
		args     EncodeArgs
		want     string // "" accepted
		misusage bool
	}{
		{EncodeArgs{Codec: "c", Audio: "a", Out: dir}, "", false},
		{EncodeArgs{Audio: "a", Out: dir}, "--codec, --audio and --out are required", true},
		{EncodeArgs{Codec: "c", Audio: "a", Out: dir, Window: -1}, "--window -1 must not be negative", true},
		{EncodeArgs{Codec: "c", Audio: "a", Out: missing}, "--out " + missing + " is not a directory", false},
		{EncodeArgs{Codec: "c", Audio: "a", Out: file}, "--out " + file + " is not a directory", false},
	} {
		cpu, gpu := c.args.Check(usage), c.args.Check(nil)
		if c.want == "" {
			if cpu != nil || gpu != nil {
				t.Errorf("%+v: %v / %v", c.args, cpu, gpu)
			}
			continue
		}
		if cpu == nil || gpu == nil || !strings.Contains(cpu.Error(), c.want) || !strings.Contains(gpu.Error(), c.want) {
			t.Errorf("%+v: %v / %v, want %q from both", c.args, cpu, gpu, c.want)
			continue
		}
		if errors.Is(cpu, usage) != c.misusage || strings.TrimPrefix(cpu.Error(), "usage: ") != gpu.Error() {
			t.Errorf("%+v: the CPU's %q and the GPU's %q differ", c.args, cpu, gpu)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("a missing --out was created")
	}
}
