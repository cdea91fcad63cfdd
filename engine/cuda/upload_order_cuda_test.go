//go:build cuda

package cuda

import (
	"testing"
)

// TestUploadAfterEnqueuedWork: Upload copies on the legacy stream, which is
// not ordered with the stream kernels and fills run on, so it must drain
// that stream first. With the stream kept busy (fills of a large block),
// a NaN fill enqueued before an Upload of the same words must not land after
// it: without the drain the copy finishes first and the fill overwrites it
// (what TestDeltaNetChunkRule/full/64 saw in session 9 while other processes
// held the GPU).
func TestUploadAfterEnqueuedWork(t *testing.T) {
	busy := alloc(t, 1<<30)
	for range 64 { // ≈ 64 GiB of writes: tens of ms on any GPU
		if err := dev.Fill32(busy, 0); err != nil {
			t.Fatal(err)
		}
	}
	const n = 1 << 16
	b := poisoned(t, n)
	want := make([]float32, n)
	for i := range want {
		want[i] = float32(i) + 0.5
	}
	if err := Upload(dev, b, 0, want); err != nil {
		t.Fatal(err)
	}
	got := download(t, b, n)
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("word %d is %v after the upload, want %v (NaN: the fill enqueued before the upload landed after it)", i, got[i], want[i])
		}
	}
}
