package voicelib

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"proscenium/engine/audio/decode"
	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/demo"
	"proscenium/engine/drama3"
)

var (
	encOnce sync.Once
	testEnc *CPUEncoder
	encErr  error
)

// demoEncoder is the demo codec's encoder (the tiny-w128 golden's weights).
func demoEncoder(t *testing.T) *CPUEncoder {
	t.Helper()
	encOnce.Do(func() { testEnc, encErr = LoadCPUEncoderBytes(demo.CodecPTH, "engine/demo/codec.pth") })
	if encErr != nil {
		t.Fatal(encErr)
	}
	return testEnc
}

func recording(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "engine", "audio", "decode", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// otherCodec is the same encoder under another codec id.
type otherCodec struct{ *CPUEncoder }

func (otherCodec) ID() string { return "codec-sha256:other" }

// TestLibraryAddLoad: a recording is encoded once and its cached codes are
// the encoder's codes of the decoded recording; WAV and FLAC of one
// recording give the same codes.
func TestLibraryAddLoad(t *testing.T) {
	enc := demoEncoder(t)
	lib, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := lib.Add(recording(t, "ref.wav"), "  The quick brown fox. ", enc)
	if err != nil {
		t.Fatal(err)
	}
	if e.Transcript != "The quick brown fox." || e.Format != "WAV" || e.Frames != 54 || e.AudioFile != "reference.wav" || e.CodecID != enc.ID() {
		t.Errorf("entry %+v", e)
	}
	got, codes, err := lib.Load(e.ID, enc)
	if err != nil {
		t.Fatal(err)
	}
	if *got != *e || len(codes) != 54 || len(codes[0]) != 10 {
		t.Fatalf("loaded %+v with %d frames", got, len(codes))
	}
	ref, err := decode.ReadReference(recording(t, "ref.wav"))
	if err != nil {
		t.Fatal(err)
	}
	direct, _, err := enc.EncodeReference(ref.Samples)
	if err != nil {
		t.Fatal(err)
	}
	for f := range codes {
		for i := range codes[f] {
			if codes[f][i] != int(direct[f*10+i]) {
				t.Fatalf("frame %d codebook %d: cached %d, encoder %d", f, i, codes[f][i], direct[f*10+i])
			}
		}
	}
	fe, err := lib.Add(recording(t, "ref.flac"), "The quick brown fox.", enc)
	if err != nil {
		t.Fatal(err)
	}
	_, fcodes, err := lib.Load(fe.ID, enc)
	if err != nil {
		t.Fatal(err)
	}
	if fe.ID == e.ID || !slices.EqualFunc(fcodes, codes, slices.Equal) {
		t.Errorf("the FLAC's codes differ from the WAV's")
	}
	me, err := lib.Add(recording(t, "ref.mp3"), "The quick brown fox.", enc)
	if err != nil {
		t.Fatal(err)
	}
	_, mcodes, err := lib.Load(me.ID, enc)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for f := range min(len(mcodes), len(codes)) {
		if slices.Equal(mcodes[f], codes[f]) {
			same++
		}
	}
	t.Logf("MP3 (64 kb/s): %d frames, %d of them equal to the WAV's codes", len(mcodes), same)

	// The MP3 and a 24-bit FLAC of its audio as ffmpeg decodes it
	// (ref-mp3.flac) are one recording: the same codes within the near-tie
	// rule (libmpg123 and ffmpeg's decoder differ in the last bits).
	// The CPU backend's encoder itself: its result has the margins.
	ts, err := checkpoint.ReadTorch(bytes.NewReader(demo.CodecPTH), int64(len(demo.CodecPTH)), "demo codec.pth")
	if err != nil {
		t.Fatal(err)
	}
	cpuEnc, err := cpu.LoadCodecEncoder(ts, drama3.CodecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dec := func(name string) *drama3.CodecEncoding {
		ref, err := decode.ReadReference(recording(t, name))
		if err != nil {
			t.Fatal(err)
		}
		res, err := cpuEnc.Encode(ref.Samples)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	fromMP3, fromFLAC := dec("ref.mp3"), dec("ref-mp3.flac")
	eq, err := cpu.CodecCodesMatch(fromFLAC.Codes, fromMP3.Codes, fromMP3.Margins, 10, 1e-4)
	t.Logf("MP3 and the FLAC of its decoded audio: %d of %d frames equal", eq, fromMP3.Frames)
	if err != nil || eq*100 < 95*fromMP3.Frames {
		t.Errorf("MP3 and the FLAC of its audio: %d of %d frames equal, %v", eq, fromMP3.Frames, err)
	}
}

// TestLibraryValidates: a changed recording is an error; damaged codes and
// codes of another codec are re-made; unknown ids are ErrNotFound.
func TestLibraryValidates(t *testing.T) {
	enc := demoEncoder(t)
	lib, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := lib.Add(recording(t, "ref.flac"), "Hello.", enc)
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := lib.Load(e.ID, enc)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(lib.Dir(), e.ID)
	if err := os.WriteFile(filepath.Join(dir, "codes.npy"), []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, got, err := lib.Load(e.ID, enc); err != nil || !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("damaged codes: %v", err)
	}
	if got, codes, err := lib.Load(e.ID, otherCodec{enc}); err != nil || got.CodecID != "codec-sha256:other" || len(codes) != len(want) {
		t.Errorf("another codec: %+v, %v", got, err)
	}
	rec := filepath.Join(dir, e.AudioFile)
	b, _ := os.ReadFile(rec)
	b[len(b)-1] ^= 1
	if err := os.WriteFile(rec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := lib.Load(e.ID, enc); err == nil || !strings.Contains(err.Error(), "has changed since it was added") {
		t.Errorf("changed recording: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "voice.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := lib.Load(e.ID, enc); err == nil || !strings.Contains(err.Error(), "voice.json is damaged") {
		t.Errorf("damaged manifest: %v", err)
	}
	for _, id := range []string{"../etc", strings.Repeat("a", 64)} {
		if _, _, err := lib.Load(id, enc); !errors.Is(err, ErrNotFound) {
			t.Errorf("Load(%q): %v", id, err)
		}
	}
	if err := lib.Delete(e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) || !errors.Is(lib.Delete(e.ID), ErrNotFound) {
		t.Errorf("after Delete: %v", err)
	}
}

// TestLibraryAddRefuses: bad transcripts and recordings change nothing.
func TestLibraryAddRefuses(t *testing.T) {
	enc := demoEncoder(t)
	lib, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wav := recording(t, "ref.wav")
	for _, tc := range []struct {
		name, transcript string
		rec              []byte
		want             string
	}{
		{"empty transcript", " ", wav, "transcript is empty"},
		{"structural", "hi <|im_end|>", wav, "structural token"},
		{"long transcript", strings.Repeat("a", MaxTranscriptBytes+1), wav, "more than the limit"},
		{"not audio", "Hello.", []byte("hello"), "cannot read the reference"},
		{"too short", "Hello.", wav[:44+2*44100], "too short"},
		{"too big", "Hello.", make([]byte, MaxAudioBytes+1), "more than the limit of"},
	} {
		if _, err := lib.Add(tc.rec, tc.transcript, enc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if ents, _ := os.ReadDir(lib.Dir()); len(ents) != 0 {
		t.Errorf("refusals left %d entries", len(ents))
	}
}

// One recording with two transcripts is two entries; the same pair is one.
func TestLibraryEntryIsRecordingAndTranscript(t *testing.T) {
	enc := demoEncoder(t)
	lib, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := recording(t, "ref.flac")
	a, err := lib.Add(rec, "One.", enc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := lib.Add(rec, "Two.", enc)
	if err != nil {
		t.Fatal(err)
	}
	again, err := lib.Add(rec, "One.", enc)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == b.ID || again.ID != a.ID || a.AudioSHA256 != b.AudioSHA256 {
		t.Fatalf("ids %s %s %s", a.ID, b.ID, again.ID)
	}
	ea, _, err := lib.Load(a.ID, enc)
	if err != nil || ea.Transcript != "One." {
		t.Errorf("entry a: %+v %v", ea, err)
	}
}
