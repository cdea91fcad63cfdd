package regular

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO, a symlink to /dev/zero and a directory are refused before any
// read (the FIFO would block an open forever, /dev/zero never ends); a
// symlink to a regular file reads as that file; a file over the limit is
// refused by its size. Each answer comes at once: a test that hangs here
// (until go test's timeout) is the failure, not a slow answer (removing the Stat check before the open makes the FIFO
// case block in open(2)).
func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "config.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("hunter2-password"), 0o600)
	link := filepath.Join(dir, "link.json")
	os.Symlink(secret, link)

	for _, c := range []struct {
		path, want string
		is         error
	}{
		{fifo, "a named pipe", ErrNotRegular},
		{zero, "a character device", ErrNotRegular},
		{dir, "a directory", ErrNotRegular},
		{secret, "16 bytes, the limit is 8", ErrTooLarge},
	} {
		_, err := ReadFile(c.path, 8)
		if err == nil || !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: %v, want %q naming the path", c.path, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error quotes the file: %v", c.path, err)
		}
	}
	if b, err := ReadFile(link, 64); err != nil || string(b) != "hunter2-password" {
		t.Errorf("symlink to a regular file: %q, %v", b, err)
	}
	if Is(fifo) || Is(zero) || !Is(link) {
		t.Error("Is disagrees with ReadFile")
	}
}
