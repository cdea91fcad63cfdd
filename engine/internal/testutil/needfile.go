package testutil

import (
	"os"
	"testing"
)

// ReadFoundFile reads the file that find locates (an input installed by
// make deps, such as the Qwen tokenizer.json). Where find cannot locate it
// the test is skipped, except under CI=1, where it fails: CI must not lose
// the case silently. find is passed in so that this package imports no
// engine package (their tests import it).
func ReadFoundFile(t testing.TB, find func() (string, error)) []byte {
	t.Helper()
	path, err := find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err, " (run make deps)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
