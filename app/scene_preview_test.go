package app

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"proscenium/app/internal/enginetest"
	"proscenium/app/projects"
	"proscenium/app/server"
	"proscenium/app/studio"
	"proscenium/engine/api"
)

// TestPlayScene: a scene preview is assembled once and played from a
// position, through the sound card (the window) under its own id that is
// no take's, or fetched whole by the browser; a preview a newer one
// replaced is refused by number.
func TestPlayScene(t *testing.T) {
	spk := &fakeSpeaker{}
	hub := studio.NewHub()
	svc, err := New(Config{Speaker: spk, Events: hub, TakesDir: t.TempDir(), ProjectsDir: t.TempDir(),
		Open: func(string) (api.Engine, error) { return &enginetest.PCM{Frames: 5}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Shutdown(svc) })
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	one := speakAndWait(t, svc, speech("One."))
	two := speakAndWait(t, svc, speech("Two."))
	p, err := svc.CreateProject("Scene")
	if err != nil {
		t.Fatal(err)
	}
	p.Lines = []projects.Line{{Text: "One.", Takes: []int{one.ID}, Chosen: one.ID}, {Text: "Between."}, {Text: "Two.", Takes: []int{two.ID}, Chosen: two.ID}}
	p.Takes = []int{one.ID, two.ID}
	if _, err := svc.SaveProject(p); err != nil {
		t.Fatal(err)
	}
	pv, err := svc.PreviewScene("Scene")
	if err != nil {
		t.Fatal(err)
	}
	frames := 5 * enginetest.SamplesPerFrame
	if pv.ID != 1 || len(pv.Lines) != 2 || pv.Lines[1].Line != 3 || len(pv.Skipped) != 1 || pv.Skipped[0].Line != 2 || len(pv.PCM) != 2*frames+int(0.4*44100) {
		t.Fatalf("preview %d: lines %+v, skipped %+v, %d samples", pv.ID, pv.Lines, pv.Skipped, len(pv.PCM))
	}
	st, err := svc.PlayScene(PlayRequest{ID: pv.ID, At: 1})
	if err != nil {
		t.Fatal(err)
	}
	if spk.offset != 44100 || len(spk.pcm) != len(pv.PCM) || spk.playing >= 0 {
		t.Fatalf("played id %d from %d: %d samples", spk.playing, spk.offset, len(spk.pcm))
	}
	if st.TakeID != 0 || st.ScenePreview != pv.ID {
		t.Errorf("playback says take %d, scene preview %d", st.TakeID, st.ScenePreview)
	}
	// The browser fetches the same audio.
	mux, err := NewMux(svc, hub, server.Options{UI: fstest.MapFS{}, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/api/scene-previews/1/pcm")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || len(data) != 4*len(pv.PCM) || res.Header.Get("X-Sample-Rate-Hz") != "44100" {
		t.Fatalf("GET the preview's PCM: %d, %d bytes", res.StatusCode, len(data))
	}
	// A newer preview replaces it.
	if _, err := svc.PreviewScene("Scene"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PlayScene(PlayRequest{ID: pv.ID}); !errors.Is(err, studio.ErrNotFound) {
		t.Errorf("playing a replaced preview: %v", err)
	}
	for path, want := range map[string]int{"/api/scene-previews/1/pcm": 404, "/api/scene-previews/0/pcm": 400, "/api/scene-previews/x/pcm": 400} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	if _, err := svc.PlayScene(PlayRequest{ID: 2, At: -1}); !errors.Is(err, studio.ErrInvalid) {
		t.Errorf("a negative position: %v", err)
	}
	if _, err := svc.PreviewScene("No such"); err == nil {
		t.Error("a project that does not exist was previewed")
	}
}
