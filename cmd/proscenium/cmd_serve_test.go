package main

import (
	"errors"
	"strings"
	"testing"
)

// Command-line mistakes are usage errors (exit 2) that say what is wrong,
// and a model that cannot load stops the server before it listens.
func TestServeRefusesBadCommandLines(t *testing.T) {
	cases := []struct {
		args  []string
		usage bool
		says  string
	}{
		{nil, true, "nothing to serve"},
		{[]string{"--ui", "--port", "70000"}, true, "not a TCP port"},
		{[]string{"--ui", "extra"}, true, `unexpected argument "extra"`},
		{[]string{"--ui", "--api-key", "short"}, true, "at least 8 characters"},
		{[]string{"--ui", "--api-key", "has a space"}, true, "--api-key"},
		{[]string{"--ui", "--allow-origin", "evil.example"}, true, "is not an origin"},
		{[]string{"--ui", "--allow-origin", "https://evil.example/path"}, true, "is not an origin"},
		{[]string{"--model", t.TempDir() + "/absent", "--settings", ""}, false, "absent"},
		{[]string{"--model", t.TempDir(), "--settings", ""}, false, "tokenizer.json"},
	}
	for _, c := range cases {
		err := runServe(c.args)
		if err == nil || errors.Is(err, errUsage) != c.usage || !strings.Contains(err.Error(), c.says) {
			t.Errorf("serve %q: %v (usage error: %v), want one containing %q (usage error: %v)",
				c.args, err, errors.Is(err, errUsage), c.says, c.usage)
		}
	}
}
