package app

import (
	"os"
	"path/filepath"
	"testing"
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
