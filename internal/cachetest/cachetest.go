// Package cachetest holds the voice cache's checks that the engines' tests
// share (the CPU's in engine/open, the GPU worker's in cmd/proscenium-gpu);
// nothing outside tests imports it.
package cachetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"proscenium/engine/api"
)

// VoiceCacheSize holds an engine's voice cache to the size it was opened
// with (open(bytes); 0: the backend's default): primed with the default,
// refs' voice gives its state's bytes; an engine whose cache is exactly that
// keeps the voice, and one a byte short refuses it (api.ErrVoiceNotKept,
// saying its size against the cache's). Each engine's cache reports the
// cap asked for.
func VoiceCacheSize(t *testing.T, open func(bytes int64) api.Engine, refs []api.Reference) {
	t.Helper()
	ctx := context.Background()
	e := open(0)
	primed, err := e.(api.VoicePrimer).PrimeVoice(ctx, refs)
	e.Close()
	if err != nil || primed.Bytes <= 0 {
		t.Fatalf("prime with the default cache: %+v, %v", primed, err)
	}
	for _, c := range []struct {
		bytes int64
		kept  bool
	}{{primed.Bytes, true}, {primed.Bytes - 1, false}} {
		e := open(c.bytes)
		got, err := e.(api.VoicePrimer).PrimeVoice(ctx, refs)
		if cp := e.Stats().Memory.VoiceCacheCap; cp != c.bytes {
			t.Errorf("a cache of %d bytes asked: its cap is %d", c.bytes, cp)
		}
		e.Close()
		switch {
		case c.kept && (err != nil || got.Bytes != primed.Bytes):
			t.Errorf("a cache of the voice's %d bytes: %+v, %v; want it kept", primed.Bytes, got, err)
		case !c.kept && (!errors.Is(err, api.ErrVoiceNotKept) || !strings.Contains(err.Error(), "more than the voice cache's")):
			t.Errorf("a cache a byte short of the voice's %d: %v; want ErrVoiceNotKept, larger than the cache", primed.Bytes, err)
		}
	}
}
