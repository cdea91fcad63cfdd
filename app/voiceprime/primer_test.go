package voiceprime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"proscenium/engine/api"
)

// primingEngine is an api.Engine that records the transcripts it primes.
type primingEngine struct {
	api.Engine // only PrimeVoice is called
	mu         sync.Mutex
	primed     []string
	noCache    bool
}

func (e *primingEngine) PrimeVoice(_ context.Context, refs []api.Reference) (*api.Primed, error) {
	if e.noCache {
		return nil, api.ErrNoVoiceCache
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.primed = append(e.primed, refs[0].Transcript)
	return &api.Primed{PrefixRows: len(refs[0].Codes)}, nil
}

func (e *primingEngine) log() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.primed)
}

// voiceOf is a voice whose one reference's transcript is its recording id.
func voiceOf(name, reference string) Voice {
	return Voice{Name: name, Reference: reference, References: func() ([]api.Reference, error) {
		if reference == "gone" {
			return nil, errors.New("its recording is no longer in the voice library")
		}
		return []api.Reference{{Transcript: reference, Codes: [][]int{{1}}}}, nil
	}}
}

// Voices are primed in the order asked, each once on an engine (a voice
// sharing another's recording too); voices without a recording, and a
// voice whose references cannot be read, are skipped (the failure told);
// a new engine primes them again; with no engine the queue is dropped.
func TestPrimer(t *testing.T) {
	var mu sync.Mutex
	var eng api.Engine
	var told []string
	p := New(Config{
		Engine: func() (api.Engine, error) {
			mu.Lock()
			defer mu.Unlock()
			if eng == nil {
				return nil, errors.New("no model loaded")
			}
			return eng, nil
		},
		Primed: func(v Voice, pr *api.Primed, err error) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, fmt.Sprintf("%s %v", v.Name, err))
		},
	})
	setEngine := func(e api.Engine) {
		mu.Lock()
		eng = e
		mu.Unlock()
	}

	first := &primingEngine{}
	setEngine(first)
	p.Prime(voiceOf("Ada", "a"), Voice{Name: "plain"}, voiceOf("Bea", "b"), voiceOf("Ada again", "a"), voiceOf("Cy", "gone"))
	p.Wait()
	p.Prime(voiceOf("Bea", "b"), voiceOf("Dee", "d"))
	p.Wait()
	if got, want := first.log(), []string{"a", "b", "d"}; !slices.Equal(got, want) {
		t.Fatalf("primed %v on the first engine, want %v", got, want)
	}
	mu.Lock()
	if want := []string{"Ada <nil>", "Bea <nil>", "Cy its recording is no longer in the voice library", "Dee <nil>"}; !slices.Equal(told, want) {
		t.Errorf("told %q, want %q", told, want)
	}
	mu.Unlock()

	second := &primingEngine{}
	setEngine(second)
	p.Prime(voiceOf("Ada", "a"))
	p.Wait()
	if got := second.log(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("primed %v on a newly loaded engine, want [a]", got)
	}

	setEngine(nil)
	p.Prime(voiceOf("Eve", "e"))
	p.Wait()
	setEngine(second)
	p.Prime(voiceOf("Fay", "f"))
	p.Wait()
	if got := second.log(); !slices.Equal(got, []string{"a", "f"}) {
		t.Fatalf("primed %v: the voice queued with no model loaded must be dropped, want [a f]", got)
	}

	// The open project's cast is primed when cast, and again when a model
	// loads.
	third := &primingEngine{}
	setEngine(third)
	p.Cast(voiceOf("Gil", "g"), voiceOf("Hal", "h"))
	p.Wait()
	fourth := &primingEngine{}
	setEngine(fourth)
	p.Loaded()
	p.Wait()
	if a, b := third.log(), fourth.log(); !slices.Equal(a, []string{"g", "h"}) || !slices.Equal(b, a) {
		t.Fatalf("the cast primed %v when cast and %v after a load, want [g h] both times", a, b)
	}

	// An engine without a voice cache is asked once per voice.
	plain := &primingEngine{noCache: true}
	setEngine(plain)
	p.Prime(voiceOf("Ada", "a"), voiceOf("Ada", "a"))
	p.Wait()
	mu.Lock()
	if n := len(told); told[n-1] != "Ada "+api.ErrNoVoiceCache.Error() || told[n-2] == told[n-1] {
		t.Errorf("told %q: want one refusal for Ada", told[n-3:])
	}
	mu.Unlock()
}

// Prime calls from many goroutines while the primer drains its queue:
// every voice is primed once (the race detector watches the handover
// between a draining goroutine and a new Prime).
func TestPrimerConcurrentPrime(t *testing.T) {
	e := &primingEngine{}
	p := New(Config{Engine: func() (api.Engine, error) { return e, nil }})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				p.Prime(voiceOf("v", fmt.Sprint(g*20+i)))
			}
		}()
	}
	wg.Wait()
	p.Wait()
	got := e.log()
	slices.Sort(got)
	if len(got) != 160 || len(slices.Compact(got)) != 160 {
		t.Fatalf("primed %d voices (%d distinct), want 160 once each", len(got), len(slices.Compact(slices.Clone(got))))
	}
}
