package cuda

import (
	"strings"
	"testing"

	"proscenium/engine/drama3"
	"proscenium/engine/internal/testutil"
)

// The GPU bytes of a checkpoint hold its stored weights (the arena keeps
// them as stored or wider) and grow with the context; a directory that is
// not a checkpoint is an error naming the problem.
func TestModelBytes(t *testing.T) {
	base := testutil.ReadFoundFile(t, drama3.FindBaseTokenizer)
	dir := t.TempDir()
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 1, BaseTokenizer: base}); err != nil {
		t.Fatal(err)
	}
	cfg, err := drama3.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	small, err := ModelBytes(dir, 256)
	if err != nil {
		t.Fatal(err)
	}
	large, err := ModelBytes(dir, 4096)
	if err != nil {
		t.Fatal(err)
	}
	stored := drama3.StoredWeightBytes(cfg)
	if small < stored || large <= small {
		t.Fatalf("GPU bytes %d (256 rows), %d (4096 rows); stored weights %d", small, large, stored)
	}
	// Takes together share the weights: each adds the same state.
	two, err := ModelTakesBytes(dir, 256, 2)
	if err != nil {
		t.Fatal(err)
	}
	four, err := ModelTakesBytes(dir, 256, 4)
	if err != nil {
		t.Fatal(err)
	}
	if state := two - small; state <= 0 || state >= small || four-small != 3*state {
		t.Fatalf("GPU bytes for 1, 2 and 4 takes: %d, %d, %d: each take beside the first must add the same state, less than the weights", small, two, four)
	}
	if _, err := ModelBytes(t.TempDir(), 0); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Fatalf("empty directory: %v, want an error naming config.json", err)
	}
}
