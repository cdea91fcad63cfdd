package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"proscenium/app/internal/enginetest"
	"proscenium/app/model"
	"proscenium/app/studio"
	"proscenium/engine/api"
	"proscenium/engine/drama3"
)

func TestFindModelsSeesAHuggingFaceSnapshot(t *testing.T) {
	hf := t.TempDir()
	t.Setenv("HF_HOME", hf)
	t.Setenv("HF_HUB_CACHE", "")
	snap := filepath.Join(hf, "hub", "models--fishaudio--drama-3", "snapshots", "0123abcd")
	os.MkdirAll(snap, 0o755)
	os.WriteFile(filepath.Join(snap, "config.json"), []byte("{}"), 0o644)
	// A snapshot without config.json and another repository are not offered.
	os.MkdirAll(filepath.Join(hf, "hub", "models--fishaudio--drama-3", "snapshots", "partial"), 0o755)
	other := filepath.Join(hf, "hub", "models--someone--else", "snapshots", "1")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "config.json"), []byte("{}"), 0o644)

	svc, err := New(Config{DemoDir: filepath.Join(t.TempDir(), "no-demo-yet")})
	if err != nil {
		t.Fatal(err)
	}
	got := svc.FindModels()
	if len(got) != 1 || got[0].Dir != snap || got[0].Source != "huggingface cache" {
		t.Fatalf("found %+v, want the one snapshot %s", got, snap)
	}
	// It holds no weights, tokenizer or codec: offered, labelled incomplete.
	if want := "fishaudio/drama-3 (0123abcd) incomplete: missing codec.pth, model.safetensors, tokenizer.json"; got[0].Label != want {
		t.Errorf("label %q, want %q", got[0].Label, want)
	}
}

func TestInspectModelReportsWhatItCannotRead(t *testing.T) {
	svc, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type":`), 0o644)
	sum, err := svc.InspectModel(dir)
	if err != nil || sum.Error == "" || sum.MemoryNeeded != 0 {
		t.Fatalf("a broken config: %+v, %v", sum, err)
	}
	if _, err := svc.InspectModel(filepath.Join(dir, "none")); err == nil {
		t.Fatal("a missing directory was inspected")
	}
}

// A model whose estimated memory passes the settings' cap is refused
// before the backend is asked to open it.
func TestMemoryCapRefusesABigModel(t *testing.T) {
	dir := t.TempDir()
	geometry := drama3.TinyConfig()
	geometry.Text.VocabSize = 155840 // what make-tiny sets from the Qwen tokenizer
	cfg, err := drama3.MarshalConfig(geometry)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644)
	opened := false
	svc, err := New(Config{Open: func(string) (api.Engine, error) { opened = true; return &enginetest.PCM{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := svc.InspectModel(dir)
	if sum.MemoryNeeded <= 1<<20 || sum.MemoryBasis != "geometry (no readable weights)" {
		t.Fatalf("summary %+v", sum)
	}
	s := svc.Settings()
	s.MemoryCapBytes = 1 << 20
	svc.SetSettings(s)
	_, err = svc.LoadModel(dir)
	if !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), "more than the memory cap of 1.0 MiB") || opened {
		t.Fatalf("load over the cap: %v (opened %v)", err, opened)
	}
	s.MemoryCapBytes = sum.MemoryNeeded
	svc.SetSettings(s)
	if _, err := svc.LoadModel(dir); err != nil || !opened {
		t.Fatalf("load at the cap: %v", err)
	}
	if got := svc.Stats().Memory.Cap; got != sum.MemoryNeeded {
		t.Fatalf("readout cap %d, want the settings' %d", got, sum.MemoryNeeded)
	}
}

// Settings a load takes, changed while a model is loaded, are said in the
// model's status (and its event) as pending until the model is loaded
// again; changed back, nothing is pending. (Broken, the studio would show
// the new voice cache in the settings while the engine kept the old one.)
func TestLoadSettingsPendingUntilReload(t *testing.T) {
	hub := studio.NewHub()
	var mu sync.Mutex
	var seen []string
	hub.Subscribe(func(e studio.Event) {
		if m, ok := e.Data.(model.ModelStatus); ok && e.Name == studio.EventModel {
			mu.Lock()
			seen = append(seen, m.Pending)
			mu.Unlock()
		}
	})
	svc := loadedService(t, Config{Events: hub, Open: func(string) (api.Engine, error) { return &testEngine{frames: 1}, nil }})
	dir := svc.ModelStatus().Dir
	s := svc.Settings()
	s.Volume = 0.5 // not a load setting
	if _, err := svc.SetSettings(s); err != nil || svc.ModelStatus().Pending != "" {
		t.Fatalf("the volume changed: pending %q, %v", svc.ModelStatus().Pending, err)
	}
	s.VoiceCacheBytes, s.Batch = 2<<30, 2
	if _, err := svc.SetSettings(s); err != nil {
		t.Fatal(err)
	}
	want := "changed since the model loaded, applied when it is loaded again: takes together 4 → 2, voice cache automatic (512.0 MiB, more on a GPU with room) → 2.0 GiB"
	if got := svc.ModelStatus().Pending; got != want {
		t.Fatalf("pending %q, want %q", got, want)
	}
	mu.Lock()
	if len(seen) == 0 || seen[len(seen)-1] != want {
		t.Errorf("model events' pending %q: the change unsaid", seen)
	}
	mu.Unlock()
	s.VoiceCacheBytes, s.Batch = 0, 0
	if _, err := svc.SetSettings(s); err != nil || svc.ModelStatus().Pending != "" {
		t.Fatalf("changed back: pending %q, %v", svc.ModelStatus().Pending, err)
	}
	s.MemoryCapBytes, s.IsolateEngine = 40<<30, true
	svc.SetSettings(s)
	if got := svc.ModelStatus().Pending; !strings.HasSuffix(got, ": memory cap none → 40.0 GiB, engine in its own process off → on") {
		t.Fatalf("pending %q", got)
	}
	if _, err := svc.LoadModel(dir); err != nil {
		t.Fatal(err)
	}
	if got := svc.ModelStatus().Pending; got != "" {
		t.Fatalf("after loading again: pending %q", got)
	}
}
