package cuda

import (
	"errors"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The Go tests that check a transcription of a CUDA helper (fp8_test.go,
// widen_test.go) also check that the helper in kernels/ still reads as it
// did when it was transcribed, so a change of the device code fails them
// until the Go copy is brought along.

// cudaFunctionBody returns the body (between the outer braces, whitespace
// collapsed to single spaces) of the __device__ function name in
// kernels/file. A carried test binary (run with -test.short away from the
// checkout) skips when the source is not there.
func cudaFunctionBody(t *testing.T, file, name string) string {
	t.Helper()
	src, err := os.ReadFile("../../kernels/" + file)
	if errors.Is(err, fs.ErrNotExist) && testing.Short() {
		t.Skipf("kernels/%s not here (a carried test binary runs with -test.short)", file)
	}
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	head := regexp.MustCompile(`__device__[^;{}]*\b` + regexp.QuoteMeta(name) + `\s*\([^)]*\)\s*\{`)
	loc := head.FindStringIndex(text)
	if loc == nil {
		t.Fatalf("kernels/%s has no __device__ function %s", file, name)
	}
	if more := head.FindAllStringIndex(text, -1); len(more) > 1 {
		t.Fatalf("kernels/%s defines %s %d times", file, name, len(more))
	}
	depth := 1
	for i := loc[1]; i < len(text); i++ {
		switch text[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return strings.Join(strings.Fields(text[loc[1]:i]), " ")
			}
		}
	}
	t.Fatalf("kernels/%s: the body of %s is not closed", file, name)
	return ""
}

// checkTranscribed fails when the body of name in kernels/file is no longer
// the one the Go copy was made from.
func checkTranscribed(t *testing.T, file, name, transcribed string) {
	t.Helper()
	if got := cudaFunctionBody(t, file, name); got != transcribed {
		t.Errorf("kernels/%s %s changed since its Go copy was made:\n  now:         %s\n  transcribed: %s\nbring the Go copy (and this text) along", file, name, got, transcribed)
	}
}
