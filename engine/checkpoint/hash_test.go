package checkpoint

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// HashFile streams a regular file's SHA-256 and refuses a FIFO (which
// would block the open) by name.
func TestHashFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "codec.bin")
	os.WriteFile(p, []byte("codec bytes"), 0o644)
	want := sha256.Sum256([]byte("codec bytes"))
	if got, err := HashFile(p); err != nil || string(got) != string(want[:]) {
		t.Fatalf("%x, %v", got, err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if _, err := HashFile(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("FIFO: %v", err)
	}
}
