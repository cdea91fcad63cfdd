package voicelib

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixedEncoder is an encoder that makes no codes: a manifest the fuzzer
// writes must be refused or loaded from its own codes, never re-encoded
// into a panic.
type fixedEncoder struct{}

func (fixedEncoder) EncodeReference(samples []float32) ([]int32, int, error) {
	frames := max(1, len(samples)/2048)
	return make([]int32, frames*2), frames, nil
}
func (fixedEncoder) Codebooks() int { return 2 }
func (fixedEncoder) ID() string     { return "codec-sha256:fixed" }

// FuzzManifest: no voice.json panics Load or Recording; what Load accepts
// names the entry's own id and a recording file inside its folder.
func FuzzManifest(f *testing.F) {
	rec := []byte("RIFF not really")
	sum := sha256.Sum256(rec)
	id := strings.Repeat("ab", 32)
	good := `{"id":"` + id + `","transcript":"Hello.","audio_file":"reference.wav","format":"WAV","seconds":2.5,` +
		`"source_rate":44100,"frames":54,"codec_id":"codec-sha256:fixed","audio_sha256":"` + hex.EncodeToString(sum[:]) + `"}`
	f.Add([]byte(good))
	f.Add([]byte(strings.NewReplacer(`"seconds"`, `"duration_s"`, `"source_rate"`, `"source_rate_hz"`).Replace(good)))
	f.Add([]byte(strings.Replace(good, "reference.wav", "../../etc/passwd", 1)))
	f.Add([]byte(strings.Replace(good, `"frames":54`, `"frames":-1`, 1)))
	f.Add([]byte(`{"id":"` + id + `","transcript":"<|im_start|>"}`))
	f.Fuzz(func(t *testing.T, manifest []byte) {
		dir := t.TempDir()
		entry := filepath.Join(dir, id)
		os.MkdirAll(entry, 0o755)
		os.WriteFile(filepath.Join(entry, "voice.json"), manifest, 0o644)
		os.WriteFile(filepath.Join(entry, "reference.wav"), rec, 0o644)
		lib, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if e, codes, err := lib.Load(id, fixedEncoder{}); err == nil {
			if e.ID != id || e.AudioFile != filepath.Base(e.AudioFile) || len(codes) != e.Frames {
				t.Fatalf("accepted %+v with %d frames of codes", e, len(codes))
			}
		}
		if _, file, err := lib.Recording(id); err == nil && file != filepath.Base(file) {
			t.Fatalf("recording file %q outside the entry", file)
		}
	})
}
