package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// Every relative link in the docs ([text](path), [text](path#heading),
// [text](#heading)) points at a file that exists and, with a fragment, at a
// heading of that Markdown file, as GitHub makes its anchors.

var (
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	fence  = regexp.MustCompile("^\\s*(```|~~~)")
)

// docFiles are the Markdown files checked: the README and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join("..", "README.md")}, files...)
}

// markdownLines returns a file's lines, those in code blocks blanked (so
// indexes stay line numbers).
func markdownLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inFence := false
	for _, l := range strings.Split(string(b), "\n") {
		if fence.MatchString(l) {
			inFence = !inFence
			l = ""
		}
		if inFence {
			l = ""
		}
		out = append(out, l)
	}
	return out
}

// anchors returns the heading anchors GitHub gives a Markdown file:
// lower case, punctuation but '-' and '_' dropped, spaces as '-', repeats
// numbered -1, -2, …
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	count := map[string]int{}
	for _, l := range markdownLines(t, path) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsNumber(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := count[a]; n > 0 {
			got[a+"-"+strconv.Itoa(n)] = true
		} else {
			got[a] = true
		}
		count[a]++
	}
	return got
}

func TestDocLinksResolve(t *testing.T) {
	checked := 0
	for _, file := range docFiles(t) {
		for i, l := range markdownLines(t, file) {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				resolved := file
				if path != "" {
					resolved = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
					if _, err := os.Stat(resolved); err != nil {
						t.Errorf("%s:%d: link %s: %s does not exist", file, i+1, target, resolved)
						continue
					}
				}
				checked++
				if frag == "" {
					continue
				}
				if !strings.HasSuffix(resolved, ".md") {
					t.Errorf("%s:%d: link %s: a fragment on a file that is not Markdown", file, i+1, target)
					continue
				}
				if !anchors(t, resolved)[frag] {
					t.Errorf("%s:%d: link %s: %s has no heading with the anchor #%s", file, i+1, target, resolved, frag)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no relative links found: the docs link each other")
	}
}
