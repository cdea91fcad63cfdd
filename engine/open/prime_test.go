package open

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"proscenium/engine/api"
	"proscenium/internal/cachetest"
)

// randomCodes is frames frames of codes in info's codebooks, from seed: a
// reference voice for the tests.
func randomCodes(info api.Info, frames int, seed uint64) [][]int {
	r := rand.New(rand.NewPCG(seed, seed+1))
	codes := make([][]int, frames)
	for i := range codes {
		for _, n := range info.CodebookSizes {
			codes[i] = append(codes[i], r.IntN(n))
		}
	}
	return codes
}

// A primed voice's first take starts from the voice cache and draws what a
// take on an engine that never saw the voice draws; priming it again finds
// it cached. (Broken, the take would prefill every row: VoiceCached false.)
func TestPrimedVoiceFirstTakeFromTheCache(t *testing.T) {
	dir := needTinyDir(t)
	ctx := context.Background()
	e, err := OpenCPU(ctx, dir, Options{Backend: CPU, Batch: 2}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	codes := randomCodes(e.Info(), 10, 9)
	refs := []api.Reference{{Transcript: "What the voice says.", Codes: codes}}
	req := api.SpeechRequest{Text: "The first line in a new voice.", Sampling: api.DefaultSampling(), Seed: 3, MaxFrames: 5, References: refs}

	primer := e.(api.VoicePrimer)
	primed, err := primer.PrimeVoice(ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	if primed.Cached || primed.PrefixRows <= len(codes) || primed.PrefillMs <= 0 {
		t.Fatalf("first prime: %+v; want the voice prefilled, more rows than its %d frames", primed, len(codes))
	}
	if st := e.Stats().Memory; st.VoiceEntries != 1 || primed.Bytes != st.VoiceCache || primed.Bytes <= 0 {
		t.Fatalf("the voice cache holds %d entries, %d bytes after the prime that says %d; want 1 entry, those bytes", st.VoiceEntries, st.VoiceCache, primed.Bytes)
	}
	fin, err := e.Synthesize(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !fin.VoiceCached || fin.PrefillRows != fin.PromptRows-primed.PrefixRows {
		t.Fatalf("the first take after the prime: cached %v, %d of %d rows prefilled; want the %d rows after the primed %d",
			fin.VoiceCached, fin.PrefillRows, fin.PromptRows, fin.PromptRows-primed.PrefixRows, primed.PrefixRows)
	}
	again, err := primer.PrimeVoice(ctx, refs)
	if err != nil || !again.Cached || again.PrefixRows != primed.PrefixRows || again.Bytes != primed.Bytes {
		t.Fatalf("second prime: %+v, %v; want the voice found cached, %d bytes", again, err, primed.Bytes)
	}

	fresh, err := OpenCPU(ctx, dir, Options{Backend: CPU, Batch: 1}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	want, err := fresh.Synthesize(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want.VoiceCached || !reflect.DeepEqual(fin.Codes, want.Codes) {
		t.Fatalf("the take after the prime drew %v, an uncached take %v (cached %v)", fin.Codes, want.Codes, want.VoiceCached)
	}
}

// The voice cache is the size Options ask for (cachetest.VoiceCacheSize);
// a negative size is refused before anything loads.
func TestVoiceCacheSize(t *testing.T) {
	dir := needTinyDir(t)
	ctx := context.Background()
	open := func(bytes int64) api.Engine {
		e, err := OpenCPU(ctx, dir, Options{Backend: CPU, VoiceCacheBytes: bytes}, "test")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	info := open(0)
	refs := []api.Reference{{Transcript: "A voice against the cache.", Codes: randomCodes(info.Info(), 8, 4)}}
	info.Close()
	cachetest.VoiceCacheSize(t, open, refs)
	if _, err := Open(ctx, dir, Options{Backend: CPU, VoiceCacheBytes: -1}); err == nil || !strings.Contains(err.Error(), "voice cache of -1 bytes") {
		t.Errorf("a negative voice cache: %v", err)
	}
}
