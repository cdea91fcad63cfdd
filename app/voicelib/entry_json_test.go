package voicelib

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEntryReadsOldNames: a voice.json written before the figures said
// their units (seconds, source_rate) reads into the same entry as one with
// the new names, and an entry is written with the new names only.
func TestEntryReadsOldNames(t *testing.T) {
	want := Entry{ID: "x", Transcript: "Hello.", AudioFile: "reference.wav", Format: "WAV", Seconds: 2.5, SourceRate: 48000, Frames: 54, CodecID: "c", AudioSHA256: "s"}
	for _, doc := range []string{
		`{"id":"x","transcript":"Hello.","audio_file":"reference.wav","format":"WAV","seconds":2.5,"source_rate":48000,"frames":54,"codec_id":"c","audio_sha256":"s"}`,
		`{"id":"x","transcript":"Hello.","audio_file":"reference.wav","format":"WAV","duration_s":2.5,"source_rate_hz":48000,"frames":54,"codec_id":"c","audio_sha256":"s"}`,
	} {
		var e Entry
		if err := json.Unmarshal([]byte(doc), &e); err != nil {
			t.Fatal(err)
		}
		if e != want {
			t.Errorf("%s\nread %+v, want %+v", doc, e, want)
		}
	}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"duration_s":2.5`) || !strings.Contains(s, `"source_rate_hz":48000`) || strings.Contains(s, `"seconds"`) || strings.Contains(s, `"source_rate"`) {
		t.Errorf("written %s", s)
	}
	var e Entry
	if err := json.Unmarshal([]byte(`{"duration_s":"long"}`), &e); err == nil {
		t.Error("a string duration accepted")
	}
}
