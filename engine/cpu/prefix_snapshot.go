package cpu

import (
	"fmt"
	"slices"

	"proscenium/engine/drama3"
)

// This file is the CPU's side of the voice prefix cache (drama3.PrefixCache):
// a snapshot is a copy, in host memory, of every state the backbone and the
// tower keep across rows — the DeltaNet conv and recurrent states, the
// attention KV rows, the tower's KV rows and both row counters — taken where
// a prompt's voice prefix ends, and copied back for a later take in the same
// voice.

// DefaultPrefixCacheBytes is the host memory the engine lets CPU voice
// prefix snapshots hold [assumption: a few voices at full geometry,
// docs/MODEL.md "Voice prefix cache"].
const DefaultPrefixCacheBytes = 512 << 20

// prefixSnapshot is the backbone's and the tower's state after a prompt's
// voice prefix.
type prefixSnapshot struct {
	layers   []layerState
	pos      int
	tower    []kvCache
	towerPos int
	bytes    int64
}

func (s *prefixSnapshot) Bytes() int64 { return s.bytes }

// Release drops the copies (the garbage collector frees them).
func (s *prefixSnapshot) Release() { s.layers, s.tower = nil, nil }

// snapshotPrefix copies the backbone's and the tower's state.
func (b *Backend) snapshotPrefix() (*prefixSnapshot, error) {
	if b.tower.next != 0 {
		return nil, fmt.Errorf("cpu backend: snapshot while an audio row awaits residual layer %d", b.tower.next)
	}
	s := &prefixSnapshot{pos: b.backbone.pos, towerPos: b.tower.pos}
	count := func(v []float32) { s.bytes += int64(len(v)) * 4 }
	for _, l := range b.backbone.layers {
		c := copyLayerState(l)
		s.layers = append(s.layers, c)
		if c.deltaNet != nil {
			count(c.deltaNet.conv)
			count(c.deltaNet.s)
		}
		if c.kv != nil {
			count(c.kv.k)
			count(c.kv.v)
		}
	}
	for _, kv := range b.tower.caches {
		s.tower = append(s.tower, kvCache{k: slices.Clone(kv.k), v: slices.Clone(kv.v)})
		count(kv.k)
		count(kv.v)
	}
	return s, nil
}

// restorePrefix makes the backbone's and the tower's state s's: copies, so
// the rows appended after it never write into the snapshot.
func (b *Backend) restorePrefix(s *prefixSnapshot) error {
	if len(s.layers) != len(b.backbone.layers) || len(s.tower) != len(b.tower.caches) {
		return fmt.Errorf("cpu backend: a prefix snapshot of %d backbone and %d tower layers, the model has %d and %d",
			len(s.layers), len(s.tower), len(b.backbone.layers), len(b.tower.caches))
	}
	for i, l := range s.layers {
		b.backbone.layers[i] = copyLayerState(l)
	}
	b.backbone.pos = s.pos
	for i, kv := range s.tower {
		b.tower.caches[i] = kvCache{k: slices.Clone(kv.k), v: slices.Clone(kv.v)}
	}
	b.tower.pos, b.tower.next, b.tower.h = s.towerPos, 0, nil
	return nil
}

func copyLayerState(l layerState) layerState {
	var c layerState
	if l.deltaNet != nil {
		c.deltaNet = &deltaNetState{conv: slices.Clone(l.deltaNet.conv), s: slices.Clone(l.deltaNet.s)}
	}
	if l.kv != nil {
		c.kv = &kvCache{k: slices.Clone(l.kv.k), v: slices.Clone(l.kv.v)}
	}
	return c
}

// SetPrefixCache makes BeginPrompt keep and restore voice prefixes in c
// (nil: no cache). The cache belongs to this backend's model: the takes
// over the same weights (NewTake) share it, no other model may.
func (b *Backend) SetPrefixCache(c *drama3.PrefixCache) { b.prefixes = c }

// PrefixCache is the backend's voice prefix cache (nil: none).
func (b *Backend) PrefixCache() *drama3.PrefixCache { return b.prefixes }

// LastPrefix is what the last BeginPrompt did with the voice prefix.
func (b *Backend) LastPrefix() drama3.PrefixOutcome { return b.lastPrefix }

// PrefixKeyOf is the key the cache keeps p's voice prefix under (false: p
// has none, or there is no cache).
func (b *Backend) PrefixKeyOf(p drama3.Prompt) (drama3.PrefixKey, bool) {
	n := p.VoicePrefix()
	if n == 0 || b.prefixes == nil {
		return drama3.PrefixKey{}, false
	}
	return prefixKey(p, n), true
}

// prefixKey is the cache's key of p's first n rows: the CPU computes the
// same under either numerics policy, so its key has no salt.
func prefixKey(p drama3.Prompt, n int) drama3.PrefixKey { return p.PrefixKey(n, "") }
