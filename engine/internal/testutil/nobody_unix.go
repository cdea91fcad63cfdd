//go:build unix

package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// RunAsNobody runs the test name of this test binary again as user and group
// nobody (65534), for a fault that root does not hit (a directory without
// write permission): a copy of the binary in a directory nobody can use,
// which is also the child's TMPDIR and HOME. The caller, running as root,
// returns after it; the test fails when the child fails. Where the child
// cannot be started (no setuid rights) the test is skipped, except under
// CI=1, where it fails: CI must not lose the case silently.
func RunAsNobody(t *testing.T, name string) {
	t.Helper()
	shared, err := os.MkdirTemp("", "as-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(shared)
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		cannot(t, "cannot copy the test binary: %v", err)
		return
	}
	bin := filepath.Join(shared, filepath.Base(os.Args[0]))
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+shared, "HOME="+shared, "GOCOVERDIR=")
	cmd.Dir = shared
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "--- FAIL") {
		cannot(t, "cannot run as nobody: %v\n%s", err, out)
		return
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("as nobody: the test did not pass (%v):\n%s", err, out)
	}
	t.Logf("as nobody:\n%s", out)
}

// cannot skips, or fails under CI=1.
func cannot(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}
