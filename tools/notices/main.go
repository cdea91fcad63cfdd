// Command notices writes the third-party notices shipped in the .deb: the
// license texts of every Go module linked into the given binaries (read from
// their build information and the module cache), of the Go standard
// library, of the npm packages whose code the UI bundle holds (the
// node_modules sources its source maps name), and of files embedded from
// elsewhere (the Qwen3 tokenizer). A module or package whose license file
// cannot be found is an error, so nothing ships without its notice.
//
//	go run ./tools/notices -bin bin/proscenium -bin … -sourcemaps out/map \
//	    -node-modules frontend/node_modules -extra engine/demo/qwen3/NOTICE.md:engine/demo/qwen3/LICENSE >NOTICES
package main

import (
	"debug/buildinfo"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var bins, extras listFlag
	flag.Var(&bins, "bin", "a Go binary whose modules to list (repeatable)")
	flag.Var(&extras, "extra", "NOTICE:LICENSE of an embedded file (repeatable)")
	maps := flag.String("sourcemaps", "", "directory of the UI bundle's source maps")
	nodeModules := flag.String("node-modules", "frontend/node_modules", "where the npm packages are installed")
	flag.Parse()
	if len(bins) == 0 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: notices -bin FILE… [-sourcemaps DIR] [-extra NOTICE:LICENSE] >NOTICES")
		os.Exit(2)
	}
	if err := write(os.Stdout, bins, *maps, *nodeModules, extras); err != nil {
		fmt.Fprintln(os.Stderr, "notices:", err)
		os.Exit(1)
	}
}

func write(w io.Writer, bins []string, maps, nodeModules string, extras []string) error {
	goVersion, mods, err := goModules(bins)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Third-party notices for Proscenium\n\nThe programs contain code from the projects below, each under the license that follows its name.\n")
	goroot, err := goEnv("GOROOT")
	if err != nil {
		return err
	}
	if err := section(w, "The Go standard library and runtime ("+goVersion+")", goroot); err != nil {
		return err
	}
	modCache, err := goEnv("GOMODCACHE")
	if err != nil {
		return err
	}
	for _, m := range mods {
		dir := filepath.Join(modCache, escape(m.path)+"@"+escape(m.version))
		if err := section(w, "Go module "+m.path+" "+m.version, dir); err != nil {
			return err
		}
	}
	if maps != "" {
		pkgs, err := bundledPackages(maps)
		if err != nil {
			return err
		}
		for _, p := range pkgs {
			dir := filepath.Join(nodeModules, filepath.FromSlash(p))
			var meta struct{ Version string }
			if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
				json.Unmarshal(b, &meta)
			}
			if err := section(w, "npm package "+p+" "+meta.Version, dir); err != nil {
				return err
			}
		}
	}
	for _, e := range extras {
		notice, license, ok := strings.Cut(e, ":")
		if !ok {
			return fmt.Errorf("-extra %q: want NOTICE:LICENSE", e)
		}
		n, err := os.ReadFile(notice)
		if err != nil {
			return err
		}
		l, err := os.ReadFile(license)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s\n\n%s\n%s", strings.Repeat("=", 78), n, l)
	}
	return nil
}

type module struct{ path, version string }

// goModules lists the modules linked into bins (their build information),
// each once, sorted, and the Go version they were built with.
func goModules(bins []string) (string, []module, error) {
	seen := map[module]bool{}
	var mods []module
	goVersion := ""
	for _, b := range bins {
		info, err := buildinfo.ReadFile(b)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", b, err)
		}
		goVersion = info.GoVersion
		for _, d := range info.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			m := module{d.Path, d.Version}
			if !seen[m] {
				seen[m] = true
				mods = append(mods, m)
			}
		}
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].path < mods[j].path })
	return goVersion, mods, nil
}

// bundledPackages lists the npm packages the source maps under dir name.
func bundledPackages(dir string) ([]string, error) {
	pkg := regexp.MustCompile(`node_modules/((?:@[^/]+/)?[^/]+)`)
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".map") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var m struct{ Sources []string }
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, s := range m.Sources {
			if sub := pkg.FindAllStringSubmatch(s, -1); len(sub) > 0 {
				seen[sub[len(sub)-1][1]] = true // the innermost package
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("no npm package in the source maps under %s", dir)
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// licenseName matches the files that hold a project's license and notices.
var licenseName = regexp.MustCompile(`(?i)^(un)?(licen[cs]e|copying|notice|patents)([-._].*)?$`)

// section writes title and the license files at the top of dir.
func section(w io.Writer, title, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", title, err)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() || !licenseName.MatchString(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		if n == 0 {
			fmt.Fprintf(w, "\n%s\n%s\n", strings.Repeat("=", 78), title)
		}
		fmt.Fprintf(w, "\n--- %s\n\n%s\n", e.Name(), strings.TrimRight(string(b), "\n"))
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s: no license file in %s", title, dir)
	}
	return nil
}

// escape is the module cache's case encoding: an upper-case letter becomes
// '!' and its lower case.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}
