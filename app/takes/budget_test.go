package takes

import (
	"context"
	"testing"

	"proscenium/app/internal/enginetest"
	"proscenium/engine/api"
)

// Issue 32: with takes that cannot be stored (here no takes folder; a
// read-only one is the same path), the list kept every take's audio in
// memory, up to 1000 of them. It now keeps at most maxUnsavedBytes of it,
// dropping the oldest unsaved takes, each announced.
func TestUnsavedTakesMemoryBounded(t *testing.T) {
	defer func(n int64) { maxUnsavedBytes = n }(maxUnsavedBytes)
	const frames = 10
	perTake := int64(4 * frames * enginetest.SamplesPerFrame)
	maxUnsavedBytes = 3 * perTake
	l, _ := Open(Config{Limit: func() int64 { return 1 << 30 }})
	eng := l.Recorded(&enginetest.PCM{Frames: frames})
	req := api.SpeechRequest{Text: "Unsaved.", Sampling: api.DefaultSampling(), MaxFrames: frames}
	for i := range 10 {
		if _, err := eng.Synthesize(context.Background(), req, func(api.Event) {}); err != nil {
			t.Fatalf("take %d: %v", i, err)
		}
	}
	list := l.Takes()
	var held int64
	for _, tk := range list {
		if tk.Stored {
			t.Fatalf("take #%d stored without a folder", tk.ID)
		}
		held += int64(4 * tk.Samples)
	}
	if held > maxUnsavedBytes || len(list) != 3 || list[0].ID != 10 {
		t.Errorf("%d takes holding %d bytes (limit %d), newest #%d", len(list), held, maxUnsavedBytes, list[0].ID)
	}
}
