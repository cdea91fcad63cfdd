package settings

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"proscenium/app/lexicon"
	"proscenium/app/studio"
	"proscenium/engine/api"
)

func TestValidateSampling(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	tests := []struct {
		name string
		s    api.Sampling
		bad  string // substring of the error; "" means valid
	}{
		{"defaults", api.DefaultSampling(), ""},
		{"greedy", api.Sampling{Temperature: 0, TopP: 1, TopK: 0}, ""},
		{"top_p edge 1", api.Sampling{Temperature: 0.7, TopP: 1, TopK: 5}, ""},
		{"negative temperature", api.Sampling{Temperature: -0.1, TopP: 0.9}, "temperature"},
		{"NaN temperature", api.Sampling{Temperature: nan, TopP: 0.9}, "temperature"},
		{"infinite temperature", api.Sampling{Temperature: inf, TopP: 0.9}, "temperature"},
		{"top_p zero", api.Sampling{Temperature: 1, TopP: 0}, "top_p"},
		{"top_p above 1", api.Sampling{Temperature: 1, TopP: 1.5}, "top_p"},
		{"top_p NaN", api.Sampling{Temperature: 1, TopP: nan}, "top_p"},
		{"negative top_k", api.Sampling{Temperature: 1, TopP: 1, TopK: -1}, "top_k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateSampling(tc.s)
			if tc.bad == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), tc.bad) {
				t.Fatalf("want ErrInvalid naming %q, got %v", tc.bad, err)
			}
		})
	}
}

func TestSettingsValidate(t *testing.T) {
	ok := Default()
	tests := []struct {
		name   string
		modify func(*Settings)
		bad    string
	}{
		{"defaults", func(*Settings) {}, ""},
		{"max frames zero", func(s *Settings) { s.MaxFrames = 0 }, "max_frames"},
		{"max frames over limit", func(s *Settings) { s.MaxFrames = MaxFramesLimit + 1 }, "max_frames"},
		{"max frames at limit", func(s *Settings) { s.MaxFrames = MaxFramesLimit }, ""},
		{"seed at JS limit", func(s *Settings) { s.Seed = MaxSeed }, ""},
		{"seed over JS limit", func(s *Settings) { s.Seed = MaxSeed + 1 }, "seed"},
		{"script too long", func(s *Settings) { s.Script = strings.Repeat("a", MaxScriptBytes+1) }, "script"},
		{"script not UTF-8", func(s *Settings) { s.Script = "\xff" }, "UTF-8"},
		{"empty script is a valid draft", func(s *Settings) { s.Script = "" }, ""},
		{"model dir with NUL", func(s *Settings) { s.ModelDir = "a\x00b" }, "model_dir"},
		{"voice cache at its least", func(s *Settings) { s.VoiceCacheBytes = MinVoiceCache }, ""},
		{"voice cache at its most", func(s *Settings) { s.VoiceCacheBytes = MaxVoiceCache }, ""},
		{"voice cache below its least", func(s *Settings) { s.VoiceCacheBytes = MinVoiceCache - 1 }, "voice_cache_bytes"},
		{"voice cache over its most", func(s *Settings) { s.VoiceCacheBytes = MaxVoiceCache + 1 }, "voice_cache_bytes"},
		{"voice cache negative", func(s *Settings) { s.VoiceCacheBytes = -1 }, "voice_cache_bytes"},
		{"a pronunciation", func(s *Settings) { s.Lexicon = []lexicon.Entry{{Written: "Nguyen", Spoken: "Win"}} }, ""},
		{"a pronunciation of markup", func(s *Settings) { s.Lexicon = []lexicon.Entry{{Written: "[x]", Spoken: "y"}} }, "lexicon: pronunciation 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.modify(&s)
			err := s.Validate()
			if (tc.bad == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.bad)) {
				t.Fatalf("want error naming %q, got %v", tc.bad, err)
			}
		})
	}
}

func TestValidateSpeechNeedsText(t *testing.T) {
	req := api.SpeechRequest{Text: " \n\t", Sampling: api.DefaultSampling(), MaxFrames: 10}
	if err := ValidateSpeech(req); !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("blank text: got %v", err)
	}
	req.Text = "Hello."
	if err := ValidateSpeech(req); err != nil {
		t.Fatalf("valid request refused: %v", err)
	}
	req.MaxFrames = 0
	if err := ValidateSpeech(req); !errors.Is(err, studio.ErrInvalid) {
		t.Fatalf("max_frames 0: got %v", err)
	}
}

func TestLoadSettings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("missing file gives defaults", func(t *testing.T) {
		s, err := Load(filepath.Join(dir, "none.json"))
		if err != nil || !reflect.DeepEqual(s, Default()) {
			t.Fatalf("got %+v, %v", s, err)
		}
	})
	t.Run("partial file keeps defaults for absent keys", func(t *testing.T) {
		s, err := Load(write("partial.json", `{"script":"Hi","seed":7}`))
		want := Default()
		want.Script, want.Seed = "Hi", 7
		if err != nil || !reflect.DeepEqual(s, want) {
			t.Fatalf("got %+v, %v; want %+v", s, err, want)
		}
	})
	bad := []struct{ name, body, mention string }{
		{"malformed", `{"script":`, "empty or cut short"},
		{"not JSON", `RIFF`, "not valid JSON (at byte 1)"},
		{"wrong type", `{"volume":"loud"}`, `field "volume" must be a number, got a string`},
		{"unknown field", `{"loudness":3}`, `"loudness"`},
		{"volume out of range", `{"volume":3}`, "volume must be in [0, 1]"},
		{"unknown output device", `{"output_device":"hdmi"}`, "output_device"},
		{"bad preset", `{"presets":[{"name":"x","sampling":{"temperature":-1,"top_p":1,"top_k":0}}]}`, "presets[0]"},
		{"bad value", `{"sampling":{"temperature":1,"top_p":2,"top_k":0}}`, "top_p"},
		{"trailing data", `{} {}`, "after the JSON"},
		{"too large", `{"script":"` + strings.Repeat("a", maxSettingsFileBytes) + `"}`, "file too large"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			p := write(tc.name+".json", tc.body)
			_, err := Load(p)
			if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("want error naming %s and %q, got %v", p, tc.mention, err)
			}
		})
	}
	// A FIFO would block a read forever (serve --settings at start-up):
	// refused by name before it is opened for reading.
	t.Run("a FIFO", func(t *testing.T) {
		p := filepath.Join(dir, "fifo.json")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		done := make(chan error, 1)
		go func() { _, err := Load(p); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), p+": not a regular file (a named pipe)") {
				t.Errorf("a FIFO: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("no answer after a minute: the read blocks on the FIFO")
		}
	})
}

func TestSaveSettingsRoundTripLeavesNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "settings.json")
	want := Default()
	want.Script, want.Seed, want.MaxFrames = "Line one.\nLine two — ünïcode.", MaxSeed, 77
	want.Sampling = api.Sampling{Temperature: 0.7, TopP: 0.85, TopK: 12}
	if err := Save(p, want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip: got %+v, %v; want %+v", got, err, want)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("want only settings.json in %s, found %d entries", filepath.Dir(p), len(entries))
	}
}

func TestKeepAsideNeverReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	now := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	for _, v := range []string{"a", "b", "c"} {
		os.WriteFile(path, []byte(v), 0o644)
		if err := keepAside(path, now); err != nil {
			t.Fatal(err)
		}
	}
	for suffix, want := range map[string]string{"": "a", "-1": "b", "-2": "c"} {
		if b, err := os.ReadFile(path + ".bad-20261130T170000Z" + suffix); string(b) != want {
			t.Errorf("bad%s: %q %v, want %q", suffix, b, err, want)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the bad file is still in place: %v", err)
	}
}

// TestASettingsFileIsALexiconFile: the largest settings file is under what
// a lexicon file may be, so the studio's settings.json always imports
// (the Pronunciations panel) and reads (synth --lexicon).
func TestASettingsFileIsALexiconFile(t *testing.T) {
	if maxSettingsFileBytes > lexicon.MaxFileBytes {
		t.Errorf("a settings file may be %d bytes, a lexicon file at most %d", maxSettingsFileBytes, lexicon.MaxFileBytes)
	}
}
