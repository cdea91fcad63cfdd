package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/BurntSushi/toml": "github.com/!burnt!sushi/toml",
		"golang.org/x/sys":           "golang.org/x/sys",
	} {
		if got := escape(in); got != want {
			t.Errorf("escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSectionNeedsALicense(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("no license here"), 0o644)
	var b strings.Builder
	if err := section(&b, "m", dir); err == nil || !strings.Contains(err.Error(), "no license file") {
		t.Fatalf("a module without a license: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "UNLICENSE"), []byte("public domain"), 0o644)
	os.WriteFile(filepath.Join(dir, "LICENSE-MIT"), []byte("MIT text"), 0o644)
	b.Reset()
	if err := section(&b, "m v1", dir); err != nil || !strings.Contains(b.String(), "public domain") || !strings.Contains(b.String(), "MIT text") || strings.Contains(b.String(), "no license here") {
		t.Fatalf("section: %v\n%s", err, b.String())
	}
}

func TestBundledPackages(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.js.map"), []byte(`{"sources":["../src/App.svelte","../node_modules/svelte/src/index.js","../node_modules/@scope/pkg/x.js","../node_modules/a/node_modules/b/c.js"]}`), 0o644)
	got, err := bundledPackages(dir)
	if err != nil || strings.Join(got, ",") != "@scope/pkg,b,svelte" {
		t.Fatalf("bundled packages %v, %v", got, err)
	}
	if _, err := bundledPackages(t.TempDir()); err == nil {
		t.Error("no source maps: no error")
	}
}
