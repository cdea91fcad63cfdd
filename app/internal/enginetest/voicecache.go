package enginetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"proscenium/engine/api"
)

// VoiceCache is a voice cache for the priming tests (api.VoicePrimer): it
// holds every voice it is asked to prime and logs each ask as the
// references' transcripts joined by "+" (also the voice's api.Primed.Key),
// marked " (held)" when it held the voice already. A voice's state is FixedBytes and RowBytes a row: one a
// reference frame and 20 for the text; NoCache makes it refuse as an
// engine without a cache, and a state larger than CapBytes (when set) is
// not kept (api.ErrVoiceNotKept).
type VoiceCache struct {
	FixedBytes int64
	RowBytes   int64
	NoCache    bool
	CapBytes   int64

	mu      sync.Mutex
	keyAsks int
	asked   []string
	refs    [][]api.Reference
	held    map[string]bool
}

func (c *VoiceCache) PrimeVoice(_ context.Context, refs []api.Reference) (*api.Primed, error) {
	if c.NoCache {
		return nil, api.ErrNoVoiceCache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	rows := 20
	for _, r := range refs {
		names = append(names, r.Transcript)
		rows += len(r.Codes)
	}
	key := strings.Join(names, "+")
	p := &api.Primed{PrefixRows: rows, Cached: c.held[key], Bytes: c.FixedBytes + c.RowBytes*int64(rows), PrefillMs: 12, Key: key}
	if c.CapBytes > 0 && p.Bytes > c.CapBytes {
		c.asked = append(c.asked, key+" (not kept)")
		c.refs = append(c.refs, refs)
		return nil, fmt.Errorf("%w: it takes %d bytes, more than the voice cache's %d", api.ErrVoiceNotKept, p.Bytes, c.CapBytes)
	}
	if c.held == nil {
		c.held = map[string]bool{}
	}
	c.held[key] = true
	if p.Cached {
		key += " (held)"
	}
	c.asked = append(c.asked, key)
	c.refs = append(c.refs, refs)
	return p, nil
}

// VoiceKey is PrimeVoice's key for refs (their transcripts joined), the
// voice not primed; KeyAsks counts the calls.
func (c *VoiceCache) VoiceKey(refs []api.Reference) (string, error) {
	if c.NoCache {
		return "", api.ErrNoVoiceCache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keyAsks++
	var names []string
	for _, r := range refs {
		names = append(names, r.Transcript)
	}
	return strings.Join(names, "+"), nil
}

// KeyAsks is how many keys VoiceKey gave.
func (c *VoiceCache) KeyAsks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.keyAsks
}

// Hold keeps the voice of key, as a take in it cached it.
func (c *VoiceCache) Hold(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held == nil {
		c.held = map[string]bool{}
	}
	c.held[key] = true
}

// Held is the keys of the voices held, sorted.
func (c *VoiceCache) Held() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var keys []string
	for k := range c.held {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Drop forgets the voice of key, as a cache that evicted it.
func (c *VoiceCache) Drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, key)
}

// Asked is the log of the voices asked for, in order.
func (c *VoiceCache) Asked() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.asked)
}

// LastRefs is the references of the last voice asked for.
func (c *VoiceCache) LastRefs() []api.Reference {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.refs) == 0 {
		return nil
	}
	return c.refs[len(c.refs)-1]
}
