package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README is the newcomer's first screen: short, the first command in
// view without scrolling, and a map whose paths exist.
const (
	maxReadmeLines   = 150
	firstScreenLines = 40
)

func readme(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func TestReadmeIsShort(t *testing.T) {
	if n := len(readme(t)); n >= maxReadmeLines {
		t.Errorf("README.md has %d lines; keep it under %d (usage goes to docs/USER.md, the API to docs/API.md, contributing to docs/CONTRIBUTING.md)", n, maxReadmeLines)
	}
}

// TestReadmeFirstCommandOnFirstScreen: the first shell block, which holds
// both commands (run the app, run the tests), starts on the first screen.
func TestReadmeFirstCommandOnFirstScreen(t *testing.T) {
	lines := readme(t)
	for i, l := range lines {
		if strings.TrimSpace(l) != "```sh" {
			continue
		}
		if i >= firstScreenLines {
			t.Fatalf("README.md's first shell block starts at line %d; it must start within the first %d", i+1, firstScreenLines)
		}
		var block []string
		for _, c := range lines[i+1:] {
			if strings.HasPrefix(c, "```") {
				break
			}
			block = append(block, c)
		}
		cmds := strings.Join(block, "\n")
		for _, want := range []string{"make run", "make test"} {
			if !strings.Contains(cmds, want) {
				t.Errorf("README.md's first shell block lacks %q:\n%s", want, cmds)
			}
		}
		return
	}
	t.Fatal("README.md has no ```sh block with its two commands")
}

// repoPath matches a backticked token that names a file or folder of the
// repository: a top-level entry followed by a path (app/, engine/drama3/,
// engine/drama3/frame.go), or a root file such as main.go.
var repoPath = regexp.MustCompile("`((?:app|engine|cmd|frontend|docs|kernels|scripts|build|tools|testdata-deps)/[A-Za-z0-9_./-]*|main\\.go|wails\\.json|Makefile)`")

// TestReadmePathsExist: every repository path the README names exists, so
// the map of folders follows the code when packages move.
func TestReadmePathsExist(t *testing.T) {
	seen := 0
	for i, l := range readme(t) {
		for _, m := range repoPath.FindAllStringSubmatch(l, -1) {
			seen++
			if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(m[1]))); err != nil {
				t.Errorf("README.md line %d names %s, which does not exist", i+1, m[1])
			}
		}
	}
	if seen < 20 {
		t.Errorf("README.md names only %d repository paths: its map of folders is missing", seen)
	}
}
