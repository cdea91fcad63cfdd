package app

import (
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/app/internal/enginetest"
	"proscenium/app/takes"
	"proscenium/engine/api"
	"proscenium/engine/audio/pcm"
)

// exportServer is the studio server with one finished 3-frame take, #1.
func exportServer(t *testing.T) (*httptest.Server, *Service) {
	t.Helper()
	srv, svc, _ := newTestServer(t, func(string) (api.Engine, error) { return &enginetest.PCM{Frames: 3}, nil })
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	speakAndWait(t, svc, speech("Export me."))
	return srv, svc
}

// Item 2: a path export never replaces an existing file unless the request
// says the user confirmed it (the native dialog's overwrite question).
func TestExportRefusesToReplaceAFile(t *testing.T) {
	srv, _ := exportServer(t)
	notes := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(notes, []byte("my notes"), 0o644)

	status, body := post(t, srv, "ExportTake", `[{"id":1,"path":"`+notes+`","format":"wav-pcm16"}]`, nil)
	if status != 409 || !strings.Contains(body, "already exists") {
		t.Fatalf("export over an existing file: %d %s", status, body)
	}
	if b, _ := os.ReadFile(notes); string(b) != "my notes" {
		t.Fatalf("the file was replaced: %q", b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(notes)); len(entries) != 1 {
		t.Fatalf("a refused export left %d files", len(entries))
	}
	status, body = post(t, srv, "ExportTake", `[{"id":1,"path":"`+notes+`","format":"wav-pcm16","overwrite":true}]`, nil)
	if b, _ := os.ReadFile(notes); status != 200 || string(b[:4]) != "RIFF" {
		t.Fatalf("confirmed overwrite: %d %s", status, body)
	}
}

// Item 2: the browser downloads the encoded take; the server writes nothing.
func TestBrowserDownloadsTheExport(t *testing.T) {
	srv, svc := exportServer(t)
	base := srv.URL
	svc.RenameTake(takes.TakeName{ID: 1, Name: "Opening line"})
	for _, c := range []struct {
		format, name, mediaType string
		size                    int
	}{
		{"", "proscenium-take-1-opening-line.wav", "audio/wav", 44 + 2*3*enginetest.SamplesPerFrame},
		{takes.ExportWAVFloat, "proscenium-take-1-opening-line.wav", "audio/wav", 58 + 4*3*enginetest.SamplesPerFrame}, // WAVE_FORMAT_IEEE_FLOAT with a fact chunk,
		{takes.ExportRaw16, "proscenium-take-1-opening-line.pcm", "application/octet-stream", 2 * 3 * enginetest.SamplesPerFrame},
	} {
		res, err := http.Get(base + "/api/takes/1/export?format=" + c.format)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		_, params, _ := mime.ParseMediaType(res.Header.Get("Content-Disposition"))
		if res.StatusCode != 200 || len(data) != c.size || params["filename"] != c.name || res.Header.Get("Content-Type") != c.mediaType {
			t.Fatalf("download %q: %d, %d bytes, %v", c.format, res.StatusCode, len(data), res.Header)
		}
		if c.format == "" {
			w, err := pcm.ParseWAV(data)
			if err != nil || len(w.Samples) != 3*enginetest.SamplesPerFrame {
				t.Fatalf("downloaded WAV: %v", err)
			}
			for i, v := range w.Samples {
				if d := v - enginetest.Signal(i); d > 0.5/32767+1e-7 || d < -0.5/32767-1e-7 {
					t.Fatalf("sample %d: %v, want %v", i, v, enginetest.Signal(i))
				}
			}
		}
	}
	for path, want := range map[string]int{"/api/takes/9/export": 404, "/api/takes/1/export?format=mp3": 400, "/api/takes/x/export": 400} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
}
