package voicelib

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLibraryByteLimit: past MaxBytes, Add refuses with ErrFull naming
// the setting and writes nothing; re-adding an entry it holds is no new
// bytes.
func TestLibraryByteLimit(t *testing.T) {
	enc := demoEncoder(t)
	lib, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := recording(t, "ref.wav")
	first, err := lib.Add(rec, "One.", enc)
	if err != nil {
		t.Fatal(err)
	}
	used, err := lib.Bytes()
	if err != nil || used < int64(len(rec)) {
		t.Fatalf("%d bytes used (%v), the recording alone is %d", used, err, len(rec))
	}
	lib.MaxBytes = used + int64(len(rec))/2
	_, err = lib.Add(rec, "Two.", enc)
	if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "voice_library_max_bytes") {
		t.Fatalf("past the limit: %v, want ErrFull naming the setting", err)
	}
	if after, _ := lib.Bytes(); after != used {
		t.Errorf("a refused Add wrote %d bytes", after-used)
	}
	if again, err := lib.Add(rec, "One.", enc); err != nil || again.ID != first.ID {
		t.Errorf("re-adding a held entry: %v", err)
	}
}

// TestLibrarySweep: entries no voice keeps and what interrupted writes
// left are removed; kept entries stay whole.
func TestLibrarySweep(t *testing.T) {
	enc := demoEncoder(t)
	dir := t.TempDir()
	lib, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := lib.Add(recording(t, "ref.wav"), "Kept.", enc)
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := lib.Add(recording(t, "ref.wav"), "Orphan.", enc)
	if err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(dir, strings.Repeat("ab", 32)) // no manifest
	os.MkdirAll(half, 0o755)
	os.WriteFile(filepath.Join(half, "reference.wav"), []byte("partial"), 0o644)
	os.WriteFile(filepath.Join(dir, kept.ID, ".reference.wav.tmp-123"), []byte("partial"), 0o644)
	removed, err := lib.Sweep(map[string]bool{kept.ID: true})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	want := []string{orphan.ID, filepath.Base(half)}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	if _, _, err := lib.Load(kept.ID, enc); err != nil {
		t.Errorf("the kept entry: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, kept.ID, ".reference.wav.tmp-123")); !os.IsNotExist(err) {
		t.Errorf("a temporary file stayed: %v", err)
	}
	if _, _, err := lib.Load(orphan.ID, enc); !errors.Is(err, ErrNotFound) {
		t.Errorf("the orphan: %v", err)
	}
}
