package gpuworker

import (
	"strings"
	"testing"
)

// A load request a backend cannot take is refused naming the field; the
// defaults pass.
func TestLoadRequestCheck(t *testing.T) {
	for _, c := range []struct {
		req  LoadRequest
		says string
	}{
		{LoadRequest{}, ""},
		{LoadRequest{MemoryCap: 22 << 30, VoiceCacheBytes: 1 << 30, Numerics: "exact"}, ""},
		{LoadRequest{MemoryCap: -1}, "memory cap -1 bytes"},
		{LoadRequest{VoiceCacheBytes: -1}, "voice cache of -1 bytes"},
		{LoadRequest{Numerics: "quick"}, "quick"},
	} {
		err := c.req.Check()
		if (c.says == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v: %v, want %q", c.req, err, c.says)
		}
	}
}
