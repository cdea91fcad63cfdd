package open

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"proscenium/engine/api"
)

// The takes of a batch share the model's one voice cache: take B, begun on a
// backend of its own while take A (which kept the voice) is still live,
// restores the voice from the cache, and draws what a take on an engine
// without that voice cached draws. (Broken once by leaving the cache out of
// cpu.Backend.NewTake: B prefilled every row, VoiceCached false.)
func TestBatchTakesShareTheVoiceCache(t *testing.T) {
	dir := needTinyDir(t)
	ctx := context.Background()
	e, err := OpenCPU(ctx, dir, Options{Backend: CPU, Batch: 2}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	codes := randomCodes(e.Info(), 12, 7)
	req := func(seed uint64, frames int) api.SpeechRequest {
		return api.SpeechRequest{Text: "A line in a cloned voice.", Sampling: api.DefaultSampling(), Seed: seed, MaxFrames: frames,
			References: []api.Reference{{Transcript: "What the voice says.", Codes: codes}}}
	}

	// A keeps the voice, then holds its first frame's events until B has
	// finished: A stays live (sitting out the steps), so B gets the set's
	// second backend.
	bDone := make(chan struct{})
	var wg sync.WaitGroup
	var finA *api.Finish
	var errA error
	started := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		once := sync.Once{}
		finA, errA = e.Synthesize(ctx, req(1, 6), func(ev api.Event) {
			if ev.Kind == api.EventFrames {
				once.Do(func() { close(started); <-bDone })
			}
		})
	}()
	<-started
	finB, err := e.Synthesize(ctx, req(2, 4), nil)
	close(bDone)
	wg.Wait()
	if err != nil || errA != nil {
		t.Fatalf("take B: %v; take A: %v", err, errA)
	}
	if finA.VoiceCached || !finB.VoiceCached || finB.PrefillRows >= finB.PromptRows {
		t.Fatalf("take A cached %v; take B cached %v, prefilled %d of %d rows: want B from the cache beside A",
			finA.VoiceCached, finB.VoiceCached, finB.PrefillRows, finB.PromptRows)
	}

	fresh, err := OpenCPU(ctx, dir, Options{Backend: CPU, Batch: 1}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	want, err := fresh.Synthesize(ctx, req(2, 4), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want.VoiceCached || !reflect.DeepEqual(finB.Codes, want.Codes) {
		t.Fatalf("take B from the cache drew %v, an uncached take %v (cached %v)", finB.Codes, want.Codes, want.VoiceCached)
	}
}
