package cpu

import (
	"context"
	"math"
	"reflect"
	"testing"

	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// voicePrompt is a reference-voice prompt of the test model: head text rows,
// frames reference frames (the voice, from seed), then the script's rows.
func voicePrompt(head, frames int, voiceSeed int, script []int) drama3.Prompt {
	var p drama3.Prompt
	for i := range head {
		p = append(p, drama3.PromptRow{Token: (i*7 + 3) % 50})
	}
	for f := range frames {
		codes := []int{(f*5 + voiceSeed) % 20, (f + voiceSeed) % 9, (f * 3) % 9, (f*2 + voiceSeed) % 9}
		p = append(p, drama3.PromptRow{Token: 50 + codes[0], Codes: codes})
	}
	return append(p, drama3.TextPrompt(script)...)
}

// takeTrace runs one take of p through the loop and keeps its codes and
// every logits vector the sampler read.
func takeTrace(t *testing.T, b *Backend, p drama3.Prompt, seed uint64) ([][]int, [][]float32) {
	t.Helper()
	var logits [][]float32
	take := drama3.Take{Prompt: p.Tokens(), Rows: p, Sampling: sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 5}, Seed: seed, MaxFrames: 10}
	res, err := drama3.Generate(context.Background(), frames(t, b), take, drama3.Listener{
		Logits: func(_, _ int, l []float32) { logits = append(logits, append([]float32(nil), l...)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Codes, logits
}

func sameLogitBits(a, b [][]float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
				return false
			}
		}
	}
	return true
}

// A take in a voice the cache holds prefills only the script, and draws what
// a backend without a cache draws, every logit bit for bit: the snapshot
// holds every state the prefix leaves (backbone DeltaNet and KV, tower KV,
// row counters). The prefix crosses a DeltaNet chunk (64 rows) so the
// chunked form's state is in it. (Broken once by leaving the tower's KV rows
// out of restorePrefix: the second take's logits differed.)
func TestPrefixCacheTakeMatchesUncached(t *testing.T) {
	m := newTestModel(t)
	plain := m.backend(t)
	cached := m.backend(t)
	cache := drama3.NewPrefixCache(64 << 20)
	cached.SetPrefixCache(cache)

	first := voicePrompt(30, 50, 1, []int{11, 12, 13, 14, 15})
	second := voicePrompt(30, 50, 1, []int{21, 22, 23})
	prefix := first.VoicePrefix()
	if prefix != 80 || second.VoicePrefix() != prefix || first.PrefixKey(prefix, "") != second.PrefixKey(prefix, "") {
		t.Fatalf("voice prefix %d (%d), keys equal %v: want 80 rows and one key", prefix, second.VoicePrefix(), first.PrefixKey(prefix, "") == second.PrefixKey(prefix, ""))
	}

	for i, p := range []drama3.Prompt{first, second, first} {
		wantCodes, wantLogits := takeTrace(t, plain, p, 9)
		codes, logits := takeTrace(t, cached, p, 9)
		if !reflect.DeepEqual(codes, wantCodes) || !sameLogitBits(logits, wantLogits) {
			t.Fatalf("take %d: the cached backend drew %v, the plain one %v (logits bit-equal: %v)", i, codes, wantCodes, sameLogitBits(logits, wantLogits))
		}
		got := cached.LastPrefix()
		want := drama3.PrefixOutcome{Rows: prefix, Restored: i > 0, Prefilled: len(p)}
		if i > 0 {
			want.Prefilled = len(p) - prefix
		}
		if got != want {
			t.Fatalf("take %d: prefix outcome %+v, want %+v", i, got, want)
		}
	}
	st := cache.Stats()
	if st.Entries != 1 || st.Hits != 2 || st.Misses != 1 || st.Bytes <= 0 {
		t.Fatalf("cache stats %+v: want one entry, 2 hits, 1 miss", st)
	}
}

// The cache keeps at most its cap: a second voice drops the first (least
// recently used), which then misses; a cap below one snapshot keeps nothing
// and the take still runs, drawing what an uncached take draws.
func TestPrefixCacheDropsEntriesNotTakes(t *testing.T) {
	m := newTestModel(t)
	plain := m.backend(t)
	b := m.backend(t)
	voiceA := voicePrompt(10, 20, 1, []int{11, 12, 13})
	voiceB := voicePrompt(10, 20, 2, []int{11, 12, 13})

	probe := drama3.NewPrefixCache(1 << 30)
	b.SetPrefixCache(probe)
	takeTrace(t, b, voiceA, 3)
	one := probe.Stats().Bytes

	cache := drama3.NewPrefixCache(one + one/2) // room for one snapshot
	b.SetPrefixCache(cache)
	takeTrace(t, b, voiceA, 3)
	takeTrace(t, b, voiceB, 3)
	if st := cache.Stats(); st.Entries != 1 || st.Evictions != 1 || st.Bytes != one {
		t.Fatalf("after two voices in a cache of one: %+v", st)
	}
	takeTrace(t, b, voiceA, 3)
	if b.LastPrefix().Restored {
		t.Fatal("voice A restored after voice B took its room")
	}

	tiny := drama3.NewPrefixCache(one - 1)
	b.SetPrefixCache(tiny)
	want, _ := takeTrace(t, plain, voiceB, 4)
	for range 2 {
		got, _ := takeTrace(t, b, voiceB, 4)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("a take with a cache too small for its voice drew %v, want %v", got, want)
		}
	}
	if st := tiny.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("a cache below one snapshot holds %+v", st)
	}
}
