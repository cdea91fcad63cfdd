package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/app/internal/enginetest"
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
