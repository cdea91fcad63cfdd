package cuda

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The device's whole check (docs/perf/run-lib.sh, whole_check_tests: the
// lists F and FF) picks this package's tests by name, and a name that
// matches no test runs nothing without a word: session 24 found an entry
// that had named no test through four runs. So every name in the lists must
// be a test of this package (cuda-tagged files included).
func TestWholeCheckListNamesTests(t *testing.T) {
	src, err := os.ReadFile("../../docs/perf/run-lib.sh")
	if errors.Is(err, fs.ErrNotExist) && testing.Short() {
		t.Skip("docs/perf/run-lib.sh not here (a carried test binary runs with -test.short)")
	}
	if err != nil {
		t.Fatal(err)
	}
	lists := regexp.MustCompile(`(?m)^\s*(F|FF)=["']\^\((?:\$\{extra\})?([A-Za-z0-9_|]+)\)\$["']`).FindAllStringSubmatch(string(src), -1)
	if len(lists) != 2 {
		t.Fatalf("found %d of the lists F and FF in run-lib.sh, want 2 (the test reads `F=\"^(${extra}A|B…)$\"` and `FF='^(A|B…)$'`)", len(lists))
	}
	tests := map[string]bool{}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	testFunc := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(b), -1) {
			tests[m[1]] = true
		}
	}
	for _, l := range lists {
		names := strings.Split(l[2], "|")
		if len(names) < 5 {
			t.Errorf("list %s has %d names: the pattern read it wrong", l[1], len(names))
		}
		for _, name := range names {
			if !tests[name] {
				t.Errorf("run-lib.sh's list %s names %s, which is no test of engine/cuda: the whole check would skip it silently", l[1], name)
			}
		}
	}
}
