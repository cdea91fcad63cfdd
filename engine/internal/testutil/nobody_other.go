//go:build !unix

package testutil

import "testing"

// RunAsNobody needs setuid (see nobody_unix.go); elsewhere the test is skipped.
func RunAsNobody(t *testing.T, name string) {
	t.Helper()
	t.Skip("running a test as another user needs unix")
}
