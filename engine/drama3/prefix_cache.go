package drama3

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sync"
)

// This file is the voice prefix cache (docs/MODEL.md "Voice prefix cache"):
// the rows of a reference-voice prompt up to and including its last
// reference frame do not depend on the script, so a backend keeps its state
// at that boundary (backbone KV rows, DeltaNet states, the tower's cache)
// after the first take in a voice and starts a later take in the same voice
// from it, prefilling only the script. The cache is the backend-independent
// part: the boundary, the key, and a least-recently-used set of snapshots
// bounded in bytes. What a snapshot holds, and where (host or device
// memory), is the backend's.

// VoicePrefix is the number of leading rows of p that do not depend on the
// script: every row up to and including the last reference frame (the
// system text, the transcripts and the frames; ReferenceVoice tokenizes the
// part after them apart). It is 0 when p has no reference frame, and when
// fewer than two rows follow it: a one-row remainder would go through the
// backbone's recurrence instead of the chunked form, so a take from the
// snapshot would not compute what an uncached take computes.
func (p Prompt) VoicePrefix() int {
	n := 0
	for r, row := range p {
		if row.Codes != nil {
			n = r + 1
		}
	}
	if len(p)-n < 2 {
		return 0
	}
	return n
}

// PrefixKey names the rows p[:n] exactly, with salt: what else the state
// depends on beyond the model the cache belongs to (a backend's numerics
// policy).
type PrefixKey [sha256.Size]byte

// String is k in hex: how a key leaves the engine (api.Primed.Key,
// api.Memory.VoiceKeys), for the studio to tell which voices are held.
func (k PrefixKey) String() string { return hex.EncodeToString(k[:]) }

// PrefixKey hashes the token and the codes of every row of p[:n], and salt.
func (p Prompt) PrefixKey(n int, salt string) PrefixKey {
	h := sha256.New()
	var w [8]byte
	put := func(v int) {
		binary.LittleEndian.PutUint64(w[:], uint64(int64(v)))
		h.Write(w[:])
	}
	put(len(salt))
	h.Write([]byte(salt))
	put(n)
	for _, row := range p[:n] {
		put(row.Token)
		put(len(row.Codes)) // 0: a text row
		for _, c := range row.Codes {
			put(c)
		}
	}
	var k PrefixKey
	h.Sum(k[:0])
	return k
}

// PrefixSnapshot is a backend's state at a prompt's voice prefix.
type PrefixSnapshot interface {
	// Bytes is the memory the snapshot holds.
	Bytes() int64
	// Release frees that memory; the cache calls it once, when it drops
	// the entry.
	Release()
}

// PrefixCacheStats is what a cache holds and did since it was made.
type PrefixCacheStats struct {
	Entries   int   `json:"entries"`
	Bytes     int64 `json:"bytes"`
	Cap       int64 `json:"cap_bytes"`
	Hits      int64 `json:"hits"`
	Misses    int64 `json:"misses"`
	Evictions int64 `json:"evictions"` // entries dropped for room (the cap, or memory short)
	// Refusals counts the snapshots not kept for being larger than the cap
	// (Fits false, or Put), RefusedBytes the last one's bytes.
	Refusals     int64 `json:"refusals"`
	RefusedBytes int64 `json:"refused_bytes,omitempty"`
	// Held is the key of every entry held, the most recently used first.
	Held []PrefixKey `json:"-"`
}

// PrefixCache keeps snapshots by key, at most Cap bytes of them, dropping
// the least recently used first. It is safe for concurrent use; a snapshot
// got from it stays valid until the same goroutine next calls Put, Evict or
// Clear (a backend uses its cache from its one take goroutine; Stats may
// come from anywhere).
type PrefixCache struct {
	mu      sync.Mutex
	cap     int64
	used    int64
	order   *list.List // of *prefixEntry, most recent first
	entries map[PrefixKey]*list.Element
	stats   PrefixCacheStats
}

type prefixEntry struct {
	key  PrefixKey
	snap PrefixSnapshot
}

// NewPrefixCache makes a cache of at most capBytes (0: it keeps nothing).
func NewPrefixCache(capBytes int64) *PrefixCache {
	return &PrefixCache{cap: max(capBytes, 0), order: list.New(), entries: map[PrefixKey]*list.Element{}}
}

// Get returns the snapshot under k, marking it the most recently used.
func (c *PrefixCache) Get(k PrefixKey) (PrefixSnapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		c.stats.Misses++
		return nil, false
	}
	c.stats.Hits++
	c.order.MoveToFront(e)
	return e.Value.(*prefixEntry).snap, true
}

// Holds reports whether the cache holds a snapshot under k, and its bytes,
// marking it the most recently used (a voice asked for is wanted soon); it
// is neither a hit nor a miss in Stats.
func (c *PrefixCache) Holds(k PrefixKey) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return 0, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*prefixEntry).snap.Bytes(), true
}

// Fits reports whether a snapshot of n bytes can be kept at all (n within
// the cap), so a backend need not make one that Put would refuse. A
// snapshot that does not fit counts as refused in Stats.
func (c *PrefixCache) Fits(n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n > c.cap {
		c.refuseLocked(n)
		return false
	}
	return true
}

func (c *PrefixCache) refuseLocked(n int64) {
	c.stats.Refusals++
	c.stats.RefusedBytes = n
}

// Put keeps s under k, dropping the least recently used entries until it
// fits. A snapshot larger than the cap is released and not kept (false); so
// is one whose key is already held (the held one stays).
func (c *PrefixCache) Put(k PrefixKey, s PrefixSnapshot) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; ok || s.Bytes() > c.cap {
		if !ok {
			c.refuseLocked(s.Bytes())
		}
		s.Release()
		return false
	}
	for c.used+s.Bytes() > c.cap {
		c.evictLocked()
	}
	c.entries[k] = c.order.PushFront(&prefixEntry{key: k, snap: s})
	c.used += s.Bytes()
	return true
}

// Evict drops the least recently used entry, releasing its memory: what a
// backend does when memory is short for a take, before failing it. false
// when the cache is empty.
func (c *PrefixCache) Evict() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.evictLocked()
}

func (c *PrefixCache) evictLocked() bool {
	e := c.order.Back()
	if e == nil {
		return false
	}
	pe := c.order.Remove(e).(*prefixEntry)
	delete(c.entries, pe.key)
	c.used -= pe.snap.Bytes()
	c.stats.Evictions++
	pe.snap.Release()
	return true
}

// Clear releases every entry (a backend closing).
func (c *PrefixCache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.order.Front(); e != nil; e = e.Next() {
		e.Value.(*prefixEntry).snap.Release()
	}
	c.order.Init()
	clear(c.entries)
	c.used = 0
}

// Stats reports the entries and bytes held and the counts so far.
func (c *PrefixCache) Stats() PrefixCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries, s.Bytes, s.Cap = len(c.entries), c.used, c.cap
	s.Held = make([]PrefixKey, 0, len(c.entries))
	for e := c.order.Front(); e != nil; e = e.Next() {
		s.Held = append(s.Held, e.Value.(*prefixEntry).key)
	}
	return s
}

// PrefixCacher is a backend that keeps a voice prefix cache: BeginPrompt of
// a prompt with a voice prefix restores the state at the prefix when the
// cache holds it (prefilling only the rows after it) and keeps it otherwise.
// Readouts show its Stats with the backend's other memory.
type PrefixCacher interface {
	PrefixCache() *PrefixCache
	// LastPrefix is what the last BeginPrompt did with the voice prefix.
	LastPrefix() PrefixOutcome
	// PrefixKeyOf is the key the cache keeps p's voice prefix under (false:
	// p has no voice prefix, or there is no cache): PrefixCache().Holds of
	// it says whether a take on p would restore its voice prefix.
	PrefixKeyOf(p Prompt) (PrefixKey, bool)
}

// TakePrefixCacher is a TakeSet whose takes share one voice prefix cache
// (the loaded model's): each take's prefill restores from it and keeps its
// voice in it. TakePrefix is what live take id's prefill did with its voice
// prefix (false: no cache).
type TakePrefixCacher interface {
	PrefixCache() *PrefixCache
	TakePrefix(id TakeID) (PrefixOutcome, bool)
	// PrefixKeyOf is PrefixCacher's.
	PrefixKeyOf(p Prompt) (PrefixKey, bool)
}

// PrefixOutcome is what the last BeginPrompt did with the voice prefix.
type PrefixOutcome struct {
	Rows      int  // rows of the prompt's voice prefix (0: none, not cached)
	Restored  bool // the state at the prefix came from the cache
	Prefilled int  // rows the prefill ran (the whole prompt, or the rows after the prefix)
}
