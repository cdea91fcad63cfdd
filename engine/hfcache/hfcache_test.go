package hfcache

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"proscenium/engine/drama3"
)

// fakeSnapshot writes hub/models--OWNER--NAME/snapshots/REV with config
// (nil: a Drama 3 config) and the files a load needs except those in skip.
func fakeSnapshot(t *testing.T, hub, repo, rev string, config []byte, mod time.Time, skip ...string) string {
	t.Helper()
	if config == nil {
		cfg := drama3.TinyConfig()
		cfg.Text.VocabSize = 1024
		b, err := drama3.MarshalConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		config = b
	}
	dir := filepath.Join(hub, "models--"+strings.ReplaceAll(repo, "/", "--"), "snapshots", rev)
	files := map[string]string{
		"config.json":                      string(config),
		"model.safetensors.index.json":     `{"metadata":{},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}}`,
		"model-00001-of-00002.safetensors": "x",
		"model-00002-of-00002.safetensors": "x",
		"tokenizer.json":                   "{}",
		"codec.pth":                        "x",
	}
	for _, s := range skip {
		delete(files, s)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chtimes(filepath.Join(dir, "config.json"), mod, mod)
	return dir
}

func setMain(t *testing.T, hub, repo, rev string) {
	t.Helper()
	refs := filepath.Join(hub, "models--"+strings.ReplaceAll(repo, "/", "--"), "refs")
	os.MkdirAll(refs, 0o755)
	if err := os.WriteFile(filepath.Join(refs, "main"), []byte(rev+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindAndResolve(t *testing.T) {
	hub := t.TempDir()
	old, now := time.Now().Add(-time.Hour), time.Now()
	mainDir := fakeSnapshot(t, hub, Repo, "aaa111", nil, old)
	// Newer, but a shard of its index is missing (an interrupted download).
	broken := fakeSnapshot(t, hub, Repo, "bbb222", nil, now, "model-00002-of-00002.safetensors")
	setMain(t, hub, Repo, "aaa111")
	tuned := fakeSnapshot(t, hub, "someone/drama3-tuned", "ccc333", nil, now)
	fakeSnapshot(t, hub, "Qwen/Qwen3-0.6B", "ddd444", []byte(`{"model_type":"qwen3"}`), now)

	got := Find([]string{hub, hub}) // the same hub twice: listed once
	if len(got) != 3 {
		t.Fatalf("found %d snapshots, want 3 (Qwen3 is no Drama 3): %+v", len(got), got)
	}
	if got[0].Dir != mainDir || !got[0].Main || !got[0].Complete() {
		t.Errorf("first: %+v, want the complete refs/main snapshot", got[0])
	}
	if got[1].Dir != broken || got[1].Complete() || strings.Join(got[1].Missing, ",") != "model-00002-of-00002.safetensors" {
		t.Errorf("second: %+v, want the incomplete one naming its shard", got[1])
	}
	if got[2].Repo != "someone/drama3-tuned" || got[2].Dir != tuned {
		t.Errorf("third: %+v, want the other repository's Drama 3 checkpoint", got[2])
	}

	for _, c := range []struct{ arg, want, err string }{
		{Repo, mainDir, ""},
		{"someone/drama3-tuned", tuned, ""},
		{"nobody/absent", "", "neither a directory nor"},
		{mainDir, mainDir, ""},                   // a path is itself
		{"./relative/dir", "./relative/dir", ""}, // not a name: the loader reports it
	} {
		dir, err := ResolveModel(c.arg, []string{hub})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %q, %v; want an error saying %q", c.arg, dir, err, c.err)
			}
		} else if err != nil || dir != c.want {
			t.Errorf("%s: %q, %v; want %s", c.arg, dir, err, c.want)
		}
	}

	// refs/main names the incomplete snapshot: refused, naming the shard.
	setMain(t, hub, Repo, "bbb222")
	if _, err := ResolveModel(Repo, []string{hub}); err == nil || !strings.Contains(err.Error(), "model-00002-of-00002.safetensors") {
		t.Errorf("refs/main incomplete: %v", err)
	}
	// No refs/main: the newest complete snapshot.
	os.Remove(filepath.Join(hub, "models--fishaudio--drama-3", "refs", "main"))
	if dir, err := ResolveModel(Repo, []string{hub}); err != nil || dir != mainDir {
		t.Errorf("no refs/main: %q, %v; want the complete %s", dir, err, mainDir)
	}
}

func TestHubDirsExpandsHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HOME", "~/hf")
	if got := HubDirs(); got[0] != filepath.Join(home, "hf", "hub") {
		t.Errorf("HF_HOME=~/hf: %v", got)
	}
	t.Setenv("HF_HUB_CACHE", "~/hubcache")
	if got := HubDirs(); got[0] != filepath.Join(home, "hubcache") {
		t.Errorf("HF_HUB_CACHE=~/hubcache: %v", got)
	}
	// The same folder by two variables is listed once (it is shown in
	// "looked in …" when nothing is found).
	t.Setenv("HF_HUB_CACHE", "~/hf/hub/")
	if got := HubDirs(); got[0] != filepath.Join(home, "hf", "hub") || slices.Contains(got[1:], got[0]) {
		t.Errorf("HF_HUB_CACHE=~/hf/hub/ and HF_HOME=~/hf: %v, want %s once", got, got[0])
	}
}
