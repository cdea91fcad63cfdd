//go:build cuda

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"proscenium/engine/api"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
	"proscenium/engine/gpuworker"
	"proscenium/internal/cachetest"
)

// TestCUDAEnginePrimedVoice primes a voice on the worker's take engine (one
// take at a time: cuda.Frames; batch 4: cuda.TakeFrames) and holds the
// voice's first take to what it must be: begun from the voice cache (only
// the rows after the primed prefix prefilled), and under exact the codes of
// the same take on a fresh engine that never saw the voice (under fast the
// share of equal frames is logged). A second prime finds the voice cached.
// The voice's key, asked for before the prime, is the prime's and the one
// a take in the voice on the fresh engine caches it under.
func TestCUDAEnginePrimedVoice(t *testing.T) {
	dir, dev := tinyOnDevice(t)
	ctx := context.Background()
	for _, n := range []drama3.Numerics{drama3.NumericsExact, drama3.NumericsFast} {
		for _, batch := range []int{1, 4} {
			dev.Numerics = n
			t.Run(fmt.Sprintf("%s/batch%d", n, batch), func(t *testing.T) {
				open := func() api.Engine {
					e, err := openCUDAEngine(ctx, dev, gpuworker.LoadRequest{Model: dir, Batch: batch}, "test", nil)
					if err != nil {
						t.Fatal(err)
					}
					return e
				}
				e := open()
				r := rand.New(rand.NewPCG(11, uint64(batch)))
				codes := make([][]int, 40)
				for i := range codes {
					for _, size := range e.Info().CodebookSizes {
						codes[i] = append(codes[i], r.IntN(size))
					}
				}
				refs := []api.Reference{{Transcript: "What the cloned voice says.", Codes: codes}}
				req := api.SpeechRequest{Text: "The first line in a voice primed on the GPU.", Seed: 7, MaxFrames: 80,
					Sampling: api.Sampling{Temperature: 1, TopP: 0.9, TopK: 30}, References: refs}

				key, err := e.(api.VoicePrimer).VoiceKey(refs)
				if err != nil {
					t.Fatal(err)
				}
				primed, err := e.(api.VoicePrimer).PrimeVoice(ctx, refs)
				if err != nil {
					t.Fatal(err)
				}
				if primed.Key != key {
					t.Fatalf("the prime's key %s, the voice's key asked before it %s", primed.Key, key)
				}
				if primed.Cached || primed.PrefixRows <= len(codes) {
					t.Fatalf("first prime: %+v; want the voice prefilled, more rows than its %d frames", primed, len(codes))
				}
				fin, err := e.Synthesize(ctx, req, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !fin.VoiceCached || fin.PrefillRows != fin.PromptRows-primed.PrefixRows {
					t.Fatalf("the first take after the prime: cached %v, %d of %d rows prefilled; want the rows after the primed %d",
						fin.VoiceCached, fin.PrefillRows, fin.PromptRows, primed.PrefixRows)
				}
				again, err := e.(api.VoicePrimer).PrimeVoice(ctx, refs)
				if err != nil || !again.Cached {
					t.Fatalf("second prime: %+v, %v; want the voice found cached", again, err)
				}
				e.Close()

				fresh := open()
				defer fresh.Close()
				want, err := fresh.Synthesize(ctx, req, nil)
				if err != nil {
					t.Fatal(err)
				}
				if want.VoiceCached {
					t.Fatal("a fresh engine found the voice cached")
				}
				if keys := fresh.Stats().Memory.VoiceKeys; !slices.Contains(keys, key) {
					t.Fatalf("after an unprimed take in the voice the cache holds %v, not the voice's key %s", keys, key)
				}
				f, c := firstCodeDiff(fin.Codes, want.Codes)
				switch {
				case f < 0:
					t.Logf("primed %d rows in %.1f ms; the take's %d frames equal an uncached take's", primed.PrefixRows, primed.PrefillMs, len(fin.Codes))
				case n == drama3.NumericsExact:
					t.Fatalf("exact: the take after the prime differs from an uncached take at frame %d codebook %d", f, c)
				default:
					t.Logf("fast: the take after the prime parts from an uncached take at frame %d of %d (fast's tolerance)", f, len(fin.Codes))
				}
			})
		}
	}
}

// TestCUDAEngineVoiceCacheSize loads the worker's take engine with the
// voice cache asked for (LoadRequest.VoiceCacheBytes, the studio's
// setting) at a voice's state exactly and a byte short of it
// (cachetest.VoiceCacheSize), one take at a time and batch 4: both snapshot
// paths; with none asked, the automatic size (cuda.AutoVoiceCache).
func TestCUDAEngineVoiceCacheSize(t *testing.T) {
	dir, dev := tinyOnDevice(t)
	dev.Numerics = drama3.NumericsFast
	ctx := context.Background()
	for _, batch := range []int{1, 4} {
		t.Run(fmt.Sprintf("batch%d", batch), func(t *testing.T) {
			open := func(voiceCache int64) api.Engine {
				e, err := openCUDAEngine(ctx, dev, gpuworker.LoadRequest{Model: dir, Batch: batch, VoiceCacheBytes: voiceCache}, "test", nil)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			// No size asked: automatic, an eighth of the room the device
			// has beside the model, from the default to MaxAutoVoiceCache.
			first := open(0)
			sizes := first.Info().CodebookSizes
			cp := first.Stats().Memory.VoiceCacheCap
			if batch == 1 {
				tp := first.(cudaEngine).frames.all[0].Backbone().W.Tier
				room := tp.Budget - (tp.Device - tp.VoiceCache)
				if want := min(cuda.AutoVoiceCache(room), room); cp != want {
					t.Errorf("no voice cache size asked, %d bytes of room beside the model: a cache of %d, want %d", room, cp, want)
				}
			}
			if cp <= cuda.DefaultPrefixCacheBytes || cp > cuda.MaxAutoVoiceCache {
				t.Errorf("no voice cache size asked on a device with room: a cache of %d, want more than the default %d, at most %d", cp, int64(cuda.DefaultPrefixCacheBytes), int64(cuda.MaxAutoVoiceCache))
			}
			t.Logf("no size asked: a voice cache of %.2f GiB", float64(cp)/(1<<30))
			first.Close()
			codes := make([][]int, 30)
			for i := range codes {
				for c, n := range sizes {
					codes[i] = append(codes[i], (7*i+c)%n)
				}
			}
			cachetest.VoiceCacheSize(t, open, []api.Reference{{Transcript: "A voice sized against the cache.", Codes: codes}})
		})
	}
}
