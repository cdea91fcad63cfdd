package open

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Without a worker binary, auto takes the CPU and says why; cuda is an
// error naming the missing worker. (No GPU is needed: CI runs these.)
func TestMissingWorker(t *testing.T) {
	_, dir := openTiny(t)
	missing := filepath.Join(t.TempDir(), "no-such-proscenium-gpu")
	t.Setenv("PROSCENIUM_GPU_WORKER", missing)

	eng, err := Open(context.Background(), dir, Options{Backend: Auto})
	if err != nil {
		t.Fatal(err)
	}
	info := eng.Info()
	eng.Close()
	if info.Backend != CPU || !strings.Contains(info.BackendReason, "no usable GPU") || !strings.Contains(info.BackendReason, missing) {
		t.Fatalf("auto without a worker: backend %q, reason %q", info.Backend, info.BackendReason)
	}

	if _, err := Open(context.Background(), dir, Options{Backend: CUDA}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("cuda without a worker: %v, want an error naming %s", err, missing)
	}
	if _, err := Open(context.Background(), dir, Options{Backend: CUDA, Worker: missing}); err == nil {
		t.Fatal("cuda with a missing --worker opened")
	}
}
