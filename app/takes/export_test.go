package takes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"proscenium/app/internal/enginetest"
	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/engine/api"
	"proscenium/engine/audio/pcm"
)

// newTestList is a takes list in dir whose takes run on an engine that
// makes frames frames of enginetest.Signal.
func newTestList(t *testing.T, dir string, frames int) *List {
	t.Helper()
	l, warnings := Open(Config{Dir: dir, Events: studio.NewHub(),
		Limit: func() int64 { return settings.DefaultTakesLimit },
		Engine: func() (api.Engine, int, error) {
			return &enginetest.PCM{Frames: frames}, enginetest.SampleRate, nil
		}})
	if len(warnings) > 0 {
		t.Fatalf("opening %s: %v", dir, warnings)
	}
	t.Cleanup(func() { l.Stop() })
	return l
}

func speech(text string) api.SpeechRequest {
	return api.SpeechRequest{Text: text, Sampling: api.DefaultSampling(), Seed: 1, MaxFrames: 100}
}

// speakAndWait starts a take of req and returns it once it has ended.
func speakAndWait(t *testing.T, l *List, req api.SpeechRequest) Take {
	t.Helper()
	tk, err := l.StartTake(req, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, x := range l.Takes() {
			if x.ID == tk.ID && x.State != TakeRunning {
				return x
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("take %d did not end within 10 s", tk.ID)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestExportFailuresLeaveNothingBehind(t *testing.T) {
	l := newTestList(t, t.TempDir(), 2)
	tk := speakAndWait(t, l, speech("Refused."))
	out := t.TempDir()
	tests := []struct {
		name string
		path string
		full bool
		want string
	}{
		{"missing folder", filepath.Join(out, "no", "such.wav"), false, "does not exist"},
		{"a directory", out, false, "is a directory"},
		{"relative", "take.wav", false, "must be absolute"},
		{"disk full", filepath.Join(out, "full.wav"), true, "the disk is full; nothing was written"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.full {
				// A writer that fails the way a full disk does (ENOSPC from
				// write, its temporary file removed): the message says so.
				writeExport = func(path string, data []byte) error {
					f, err := os.CreateTemp(filepath.Dir(path), ".x-*")
					if err != nil {
						return err
					}
					f.Close()
					os.Remove(f.Name()) // what WriteFileAtomic does on a failed write
					return &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
				}
				defer func() { writeExport = pcm.WriteFileAtomic }()
			}
			_, err := l.ExportTake(ExportRequest{ID: tk.ID, Path: tc.path, Format: ExportWAV16})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Fatalf("left behind: %v", entries)
			}
		})
	}
	if _, err := l.ExportTake(ExportRequest{ID: tk.ID, Path: filepath.Join(out, "x.wav"), Format: "mp3"}); !errors.Is(err, studio.ErrInvalid) {
		t.Fatalf("unknown format: %v", err)
	}
}
