// Package layers holds the module's import rules as tests: which packages
// may reach which (the studio never reaches a backend except through
// engine/open), and that no package imports its parent directory's
// package. It has no code of its own; the rules read `go list`.
package layers

import (
	"bytes"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// reachRules: the packages matched by from never reach (directly or
// through any chain of imports, tests excluded) the packages in never,
// except through the package through ("" allows no way), in a build with
// tags (go list -e: the cuda-tagged kernels package embeds build outputs a
// fresh clone lacks; its imports are listed all the same).
var reachRules = []struct {
	from    string
	tags    string
	never   []string
	through string
	why     string
}{
	{"proscenium/app/...", "", []string{"proscenium/engine/cpu", "proscenium/engine/cuda", "proscenium/engine/gpuworker"}, "proscenium/engine/open",
		"the studio asks engine/open, which chooses and opens backends; it never imports one"},
	{"proscenium/engine/cuda/...", "cuda", []string{"proscenium/engine/cpu"}, "",
		"what the two backends share (the codec plan, the encoding, the RoPE tables) is engine/drama3's; the worker hands the GPU codec its plan"},
}

// goList runs `go list` with args from the module root and returns its
// lines, each split into fields.
func goList(t *testing.T, args ...string) [][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var lines [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		lines = append(lines, strings.Fields(l))
	}
	return lines
}

// matches reports whether pkg is matched by pattern (a path, or a path
// ending in /... for it and everything below it).
func matches(pattern, pkg string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

func TestReachRules(t *testing.T) {
	for _, r := range reachRules {
		// Every package from reaches, with its direct imports.
		imports := map[string][]string{}
		for _, f := range goList(t, "-e", "-deps", "-tags", r.tags, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", strings.Replace(r.from, "proscenium/", "./", 1)) {
			imports[f[0]] = f[1:]
		}
		// Walk from each matched package, never through r.through,
		// remembering how each package was reached.
		via := map[string]string{}
		var queue []string
		for p := range imports {
			if matches(r.from, p) {
				via[p] = ""
				queue = append(queue, p)
			}
		}
		if len(queue) == 0 {
			t.Fatalf("%s matches no package", r.from)
		}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if p == r.through {
				continue
			}
			for _, q := range imports[p] {
				if _, seen := via[q]; !seen {
					via[q] = p
					queue = append(queue, q)
				}
			}
		}
		for _, bad := range r.never {
			if _, reached := via[bad]; !reached {
				continue
			}
			chain := []string{bad}
			for p := via[bad]; p != ""; p = via[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			t.Errorf("%s reaches %s: %s (%s)", r.from, bad, strings.Join(chain, " → "), r.why)
		}
	}
}

// TestNoPackageImportsItsParent: a child package never imports its parent
// (what both need lives in a package of its own, as engine/api and
// engine/audio/pcm do), so the way down a folder is the way down the
// imports.
func TestNoPackageImportsItsParent(t *testing.T) {
	pkgs := goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	for _, f := range pkgs {
		pkg, parent := f[0], path.Dir(f[0])
		if slices.Contains(f[1:], parent) {
			t.Errorf("%s imports its parent %s: put what both need in a package of its own (the parent may import its children)", pkg, parent)
		}
	}
}
