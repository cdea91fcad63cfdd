package voices

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/app/settings"
	"proscenium/app/voicelib"
)

// countEncoder stands in for the model's codec: one code per 2048 samples.
type countEncoder struct{}

func (countEncoder) EncodeReference(samples []float32) ([]int32, int, error) {
	frames := max(1, len(samples)/2048)
	return make([]int32, frames*2), frames, nil
}
func (countEncoder) Codebooks() int { return 2 }
func (countEncoder) ID() string     { return "codec-sha256:test" }

// bigWAV is a 16-bit WAV of 8 channels at 48 kHz, just under the upload
// limit (16 MiB, 21.8 s): a tone, so it is not silent.
func bigWAV() []byte {
	const channels, rate = 8, 48000
	frames := (voicelib.MaxAudioBytes - 44) / (2 * channels)
	b := make([]byte, 44+frames*channels*2)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], channels)
	binary.LittleEndian.PutUint32(b[24:], rate)
	binary.LittleEndian.PutUint32(b[28:], rate*channels*2)
	binary.LittleEndian.PutUint16(b[32:], channels*2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(frames*channels*2))
	for i := 0; i < frames; i++ {
		v := int16(8000 * math.Sin(float64(i)*2*math.Pi*220/rate))
		for c := 0; c < channels; c++ {
			binary.LittleEndian.PutUint16(b[44+2*(i*channels+c):], uint16(v))
		}
	}
	return b
}

func newEditor(t *testing.T, dir string, st *settings.Store) *Editor {
	t.Helper()
	return New(Config{Dir: dir, Settings: st, Encoder: func() (voicelib.Encoder, error) { return countEncoder{}, nil },
		Save: func(s settings.Settings) (settings.Settings, error) { return st.Update(s, nil) }})
}

// recordings counts the recordings in the library folder.
func recordings(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*", "reference.*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// Issue 32: re-uploading a voice under one name with new transcripts kept
// every 16 MiB recording. Five re-uploads now leave one; deleting the voice
// leaves none; a recording two voices share stays until both are gone.
func TestReplacedVoiceLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	st, _ := settings.Open("")
	e := newEditor(t, dir, st)
	rec := bigWAV()
	for i := range 5 {
		if _, err := e.CreateVoice("narrator", fmt.Sprintf("Take %d of the narrator.", i), rec); err != nil {
			t.Fatal(err)
		}
	}
	if n := recordings(t, dir); n != 1 {
		t.Errorf("five uploads under one name left %d recordings", n)
	}
	vs, err := e.CreateVoice("twin", "Take 4 of the narrator.", rec) // the same entry
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.DeleteVoice("narrator"); err != nil {
		t.Fatal(err)
	}
	if n := recordings(t, dir); n != 1 || len(vs) != 2 {
		t.Errorf("the twin's recording: %d recordings, %d voices", n, len(vs))
	}
	if _, err := e.DeleteVoice("twin"); err != nil {
		t.Fatal(err)
	}
	if n := recordings(t, dir); n != 0 {
		t.Errorf("no voices left, %d recordings", n)
	}
}

// The library's byte limit is the settings': past it a new voice is
// refused, saying so, and nothing changes.
func TestVoiceLibraryLimit(t *testing.T) {
	dir := t.TempDir()
	st, _ := settings.Open("")
	s := st.Get()
	s.VoiceLibraryMaxBytes = 20 << 20
	if _, err := st.Update(s, nil); err != nil {
		t.Fatal(err)
	}
	e := newEditor(t, dir, st)
	rec := bigWAV()
	if _, err := e.CreateVoice("one", "The first.", rec); err != nil {
		t.Fatal(err)
	}
	vs, err := e.CreateVoice("two", "The second.", rec)
	if !errors.Is(err, voicelib.ErrFull) || !strings.Contains(err.Error(), "voice_library_max_bytes") || len(vs) != 1 {
		t.Errorf("past the limit: %v (%d voices)", err, len(vs))
	}
	if n := recordings(t, dir); n != 1 {
		t.Errorf("%d recordings", n)
	}
}

// The sweep at start removes what no voice uses, but only when the
// settings came from their file.
func TestSweepLibrary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "settings.json")
	st, _ := settings.Open(path)
	e := newEditor(t, dir, st)
	rec := bigWAV()[:2<<20+44] // 2.7 s
	binary.LittleEndian.PutUint32(rec[40:], 2<<20)
	if _, err := e.CreateVoice("kept", "Kept.", rec); err != nil {
		t.Fatal(err)
	}
	lib, _ := voicelib.Open(dir)
	if _, err := lib.Add(rec, "Orphan.", countEncoder{}); err != nil {
		t.Fatal(err)
	}
	memory, _ := settings.Open("")
	if removed, _ := newEditor(t, dir, memory).SweepLibrary(); len(removed) != 0 || recordings(t, dir) != 2 {
		t.Errorf("with default settings the sweep removed %v", removed)
	}
	reopened, _ := settings.Open(path)
	removed, err := newEditor(t, dir, reopened).SweepLibrary()
	if err != nil || len(removed) != 1 || recordings(t, dir) != 1 {
		t.Errorf("sweep: removed %v (%v), %d recordings left", removed, err, recordings(t, dir))
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
