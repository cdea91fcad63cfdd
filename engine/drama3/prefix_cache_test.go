package drama3

import "testing"

type testSnapshot struct {
	n        int64
	released *int
}

func (s testSnapshot) Bytes() int64 { return s.n }
func (s testSnapshot) Release()     { *s.released++ }

// The voice prefix ends after the last reference frame; a prompt without
// frames, or with fewer than two rows after them, has none. The key changes
// with any token, code or the salt, and not with the rows after n.
func TestVoicePrefixAndKey(t *testing.T) {
	p := append(TextPrompt([]int{1, 2, 3}), PromptRow{Token: 9, Codes: []int{4, 5}}, PromptRow{Token: 8, Codes: []int{3, 1}})
	p = append(p, TextPrompt([]int{6, 7, 8})...)
	if n := p.VoicePrefix(); n != 5 {
		t.Fatalf("voice prefix %d, want 5", n)
	}
	if n := TextPrompt([]int{1, 2, 3}).VoicePrefix(); n != 0 {
		t.Fatalf("a text prompt has a voice prefix of %d rows", n)
	}
	if n := p[:6].VoicePrefix(); n != 0 {
		t.Fatalf("a prefix with one row after it: %d, want 0", n)
	}
	k := p.PrefixKey(5, "exact")
	other := append(Prompt(nil), p...)
	other[7].Token = 99
	if other.PrefixKey(5, "exact") != k {
		t.Fatal("a row after the prefix changed its key")
	}
	other[4] = PromptRow{Token: 8, Codes: []int{3, 2}}
	if other.PrefixKey(5, "exact") == k {
		t.Fatal("a reference code changed and the key did not")
	}
	if p.PrefixKey(5, "fast") == k || p.PrefixKey(4, "exact") == k {
		t.Fatal("the salt or the length changed and the key did not")
	}
}

// The cache drops the least recently used entry for room, refuses (and
// releases) a snapshot over the cap, and releases everything on Clear.
func TestPrefixCacheLRU(t *testing.T) {
	released := 0
	snap := func(n int64) testSnapshot { return testSnapshot{n: n, released: &released} }
	key := func(b byte) PrefixKey { return PrefixKey{b} }
	c := NewPrefixCache(100)
	if !c.Put(key(1), snap(40)) || !c.Put(key(2), snap(40)) {
		t.Fatal("two snapshots within the cap refused")
	}
	if _, ok := c.Get(key(1)); !ok { // 1 is now the most recent
		t.Fatal("entry 1 missing")
	}
	if !c.Put(key(3), snap(40)) {
		t.Fatal("a third snapshot refused")
	}
	if _, ok := c.Get(key(2)); ok {
		t.Fatal("entry 2, the least recently used, was kept")
	}
	if released != 1 {
		t.Fatalf("%d snapshots released, want 1", released)
	}
	if c.Put(key(4), snap(101)) || released != 2 {
		t.Fatalf("a snapshot over the cap was kept (or not released: %d)", released)
	}
	if c.Fits(102) || !c.Fits(100) {
		t.Fatal("Fits: 102 bytes fit a cap of 100, or 100 did not")
	}
	if st := c.Stats(); st.Refusals != 2 || st.RefusedBytes != 102 {
		t.Fatalf("refusals %d, last %d bytes: want 2 (Put 101, Fits 102), 102", st.Refusals, st.RefusedBytes)
	}
	if c.Put(key(3), snap(10)) || c.Stats().Refusals != 2 {
		t.Fatal("a snapshot under a key held was kept, or counted as over the cap")
	}
	if !c.Evict() {
		t.Fatal("Evict on a cache of two entries")
	}
	st := c.Stats()
	if st.Entries != 1 || st.Bytes != 40 || st.Evictions != 2 || st.Hits != 1 || st.Misses != 1 || st.Cap != 100 {
		t.Fatalf("stats %+v", st)
	}
	c.Clear()
	if released != 5 || c.Evict() || c.Stats().Bytes != 0 {
		t.Fatalf("Clear released %d, left %+v", released, c.Stats())
	}
}

// Holds marks an entry the most recently used, as Get does, without
// counting a hit or a miss.
func TestPrefixCacheHolds(t *testing.T) {
	released := 0
	snap := func(n int64) testSnapshot { return testSnapshot{n: n, released: &released} }
	c := NewPrefixCache(100)
	c.Put(PrefixKey{1}, snap(40))
	c.Put(PrefixKey{2}, snap(30))
	holds := func(k byte) bool { _, ok := c.Holds(PrefixKey{k}); return ok }
	if n, ok := c.Holds(PrefixKey{1}); !ok || n != 40 || holds(9) {
		t.Fatalf("Holds: want entry 1 held (40 bytes; got %d, %v) and 9 not", n, ok)
	}
	c.Put(PrefixKey{3}, snap(40)) // evicts the least recently used: 2, since Holds touched 1
	if !holds(1) || holds(2) {
		t.Fatal("entry 1, held last, was evicted before entry 2")
	}
	if st := c.Stats(); st.Hits != 0 || st.Misses != 0 {
		t.Fatalf("Holds counted %d hits and %d misses", st.Hits, st.Misses)
	}
}
