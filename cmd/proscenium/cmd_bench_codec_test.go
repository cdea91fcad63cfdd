package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// The GPU codec commands and the debug drivers check their arguments before
// starting the worker, and name the worker when it cannot start.
func TestCodecGPUCommandsArguments(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-worker")
	for _, tc := range []struct {
		name  string
		run   func([]string) error
		args  []string
		usage bool
		want  string
	}{
		{"bench without geometry", runBenchCodec, nil, true, "--synthetic s2"},
		{"bench unknown geometry", runBenchCodec, []string{"--synthetic", "s3"}, true, "--synthetic s2"},
		{"bench zero frames", runBenchCodec, []string{"--synthetic", "s2", "--frames", "0"}, true, "--frames 0"},
		{"bench missing worker", runBenchCodec, []string{"--synthetic", "s2", "--worker", missing}, false, missing},
		{"decode unknown backend", runDebugDecode, []string{"--codec", "c", "--codes", "x", "--out", "o", "--backend", "tpu"}, true, "tpu"},
		{"decode missing worker", runDebugDecode, []string{"--codec", "c", "--codes", "x", "--out", "o", "--backend", "cuda", "--worker", missing}, false, missing},
		{"encode unknown backend", runDebugEncode, []string{"--codec", "c", "--audio", "x", "--out", "o", "--backend", "tpu"}, true, "tpu"},
		{"encode missing worker", runDebugEncode, []string{"--codec", "c", "--audio", "x", "--out", "o", "--backend", "cuda", "--worker", missing}, false, missing},
		{"backbone unknown backend", runDebugBackbone, []string{"--model", "m", "--ids", "1,2", "--out", "o", "--backend", "tpu"}, true, "tpu"},
		{"backbone missing worker", runDebugBackbone, []string{"--model", "m", "--ids", "1,2", "--out", "o", "--backend", "cuda", "--worker", missing}, false, missing},
	} {
		err := tc.run(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, errUsage) != tc.usage {
			t.Errorf("%s: error %v, want one saying %q (usage error: %v)", tc.name, err, tc.want, tc.usage)
		}
	}
}
