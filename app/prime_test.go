package app

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"proscenium/app/studio"
	"proscenium/engine/api"
)

// primingEngine is testEngine with a voice cache: it records the
// transcripts of the voices it primes.
type primingEngine struct {
	testEngine
	pmu    sync.Mutex
	primed []string
}

func (e *primingEngine) PrimeVoice(_ context.Context, refs []api.Reference) (*api.Primed, error) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	e.primed = append(e.primed, refs[0].Transcript)
	return &api.Primed{PrefixRows: len(refs[0].Codes) + 20, PrefillMs: 12}, nil
}

func (e *primingEngine) log() []string {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	return slices.Clone(e.primed)
}

// A voice is primed on the loaded model when it is created, in the studio
// or through the speech API (with a line in the status line); the open
// project's cast is primed when saved (voices primed already are not primed
// again) and again when another model loads. (Broken, the engine would
// prime nothing: the voice's first take prefills its reference.)
func TestVoicesPrimed(t *testing.T) {
	rec, err := os.ReadFile(filepath.Join("..", "engine", "audio", "decode", "testdata", "ref.flac"))
	if err != nil {
		t.Fatal(err)
	}
	var engines []*primingEngine
	hub := studio.NewHub()
	var nmu sync.Mutex
	var notices []string
	hub.Subscribe(func(e studio.Event) {
		if n, ok := e.Data.(studio.Notice); ok {
			nmu.Lock()
			notices = append(notices, n.Text)
			nmu.Unlock()
		}
	})
	svc := loadedService(t, Config{Events: hub, VoicesDir: t.TempDir(), ProjectsDir: t.TempDir(), Open: func(string) (api.Engine, error) {
		e := &primingEngine{testEngine: testEngine{frames: 1}}
		engines = append(engines, e)
		return e, nil
	}})
	dir := svc.ModelStatus().Dir

	if _, err := svc.CreateVoice("Ada", "Ada speaks.", rec); err != nil {
		t.Fatal(err)
	}
	svc.primer.Wait()
	if got := engines[0].log(); !slices.Equal(got, []string{"Ada speaks."}) {
		t.Fatalf("primed %q after creating Ada, want her voice", got)
	}
	nmu.Lock()
	if len(notices) == 0 || !strings.Contains(notices[len(notices)-1], `voice "Ada" is ready`) {
		t.Errorf("status line %q, want Ada's voice said ready", notices)
	}
	nmu.Unlock()

	// POST /v1/audio/voices primes too.
	resp := postAPIVoice(t, svc, "Bob", "Bob speaks.", "ref.flac", rec)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /v1/audio/voices: %d", resp.StatusCode)
	}
	svc.primer.Wait()
	if got := engines[0].log(); !slices.Equal(got, []string{"Ada speaks.", "Bob speaks."}) {
		t.Fatalf("primed %q after the API created Bob", got)
	}

	p, err := svc.CreateProject("Scene")
	if err != nil {
		t.Fatal(err)
	}
	p.Cast = []string{"", "Bob", "Ada"}
	if _, err := svc.SaveProject(p); err != nil {
		t.Fatal(err)
	}
	svc.primer.Wait()
	if got := engines[0].log(); len(got) != 2 {
		t.Fatalf("primed %q: saving a cast of voices primed already primes nothing", got)
	}

	if _, err := svc.LoadModel(dir); err != nil {
		t.Fatal(err)
	}
	svc.primer.Wait()
	if len(engines) != 2 {
		t.Fatalf("%d engines opened, want 2", len(engines))
	}
	if got := engines[1].log(); !slices.Equal(got, []string{"Bob speaks.", "Ada speaks."}) {
		t.Fatalf("primed %q on the newly loaded model, want the project's cast in its order", got)
	}
}
