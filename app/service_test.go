package app

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"proscenium/app/lexicon"
	"proscenium/app/model"
	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/app/voices"
	"proscenium/engine/api"
)

// testEngine is a stand-in backend: it makes one frame per tick until it
// has made frames frames or the context ends.
type testEngine struct {
	frames int
	tick   time.Duration
	mem    api.Memory

	mu     sync.Mutex
	closed bool
	got    []api.SpeechRequest
}

func (e *testEngine) Info() api.Info {
	return api.Info{Model: "test", Backend: "cpu", SampleRate: 44100, SamplesPerFrame: 2048, Codebooks: 10}
}

func (e *testEngine) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	e.mu.Lock()
	e.got = append(e.got, req)
	e.mu.Unlock()
	start := time.Now()
	reason, n := api.FinishStop, 0
	for n < e.frames {
		select {
		case <-ctx.Done():
			reason = api.FinishCancel
		case <-time.After(e.tick):
		}
		if reason == api.FinishCancel {
			break
		}
		n++
		emit(api.Event{Kind: api.EventFrames, Frames: n})
	}
	secs := float64(n*2048) / 44100
	el := time.Since(start)
	return &api.Finish{Reason: reason, Frames: n, AudioS: secs, ElapsedS: api.Seconds(el),
		RealTimeFactor: el.Seconds() / secs, TimeToFirstAudioMs: api.Millis(e.tick)}, nil
}

func (e *testEngine) Stats() api.Stats { return api.Stats{Memory: e.mem} }

func (e *testEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	return nil
}

// recorder collects the events a Hub publishes.
type recorder struct {
	mu     sync.Mutex
	events []studio.Event
}

func (r *recorder) add(e studio.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, e.Name)
	}
	return out
}

func speech(text string) api.SpeechRequest {
	return api.SpeechRequest{Text: text, Sampling: api.DefaultSampling(), Seed: 1, MaxFrames: 100}
}

func newService(t *testing.T, open model.Opener) (*Service, *recorder) {
	t.Helper()
	hub := studio.NewHub()
	rec := &recorder{}
	hub.Subscribe(rec.add)
	svc, err := New(Config{Open: open, Events: hub})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Shutdown(svc) })
	return svc, rec
}

func TestNoBackendAnswersHonestly(t *testing.T) {
	svc, rec := newService(t, nil)

	st := svc.ModelStatus()
	if st.State != model.ModelNone || st.CanLoad || !strings.Contains(st.Message, "no model loaded") {
		t.Fatalf("status without backend: %+v", st)
	}
	if _, err := svc.LoadModel(t.TempDir()); !errors.Is(err, studio.ErrNoBackend) {
		t.Fatalf("LoadModel without backend: got %v, want ErrNoBackend", err)
	}
	if _, err := svc.Speak(speech("Hello.")); !errors.Is(err, studio.ErrNoModel) || err.Error() != "no model loaded" {
		t.Fatalf("Speak without model: got %v", err)
	}
	stats := svc.Stats()
	if stats.Loaded || stats.Memory != nil || stats.LastTake != nil || stats.Message != "no model loaded" {
		t.Fatalf("Stats without model must carry no numbers: %+v", stats)
	}
	if stopped, err := svc.Stop(); stopped || err != nil {
		t.Fatalf("Stop with nothing running: %v, %v", stopped, err)
	}
	if st, err := svc.UnloadModel(); err != nil || st.State != model.ModelNone {
		t.Fatalf("UnloadModel without model: %+v, %v", st, err)
	}
	if n := len(svc.Takes()); n != 0 {
		t.Fatalf("takes: %d, want none", n)
	}
	if names := rec.names(); len(names) != 0 {
		t.Fatalf("nothing changed, yet events were sent: %v", names)
	}
}

func TestLoadModelChecksThePathFirst(t *testing.T) {
	svc, _ := newService(t, func(string) (api.Engine, error) { t.Fatal("opener called"); return nil, nil })
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	tests := []struct {
		dir  string
		want error
		says string
	}{
		{"", studio.ErrInvalid, "the model path is empty"},
		{filepath.Join(t.TempDir(), "missing"), fs.ErrNotExist, "missing: no such folder"},
		{file, studio.ErrInvalid, "file is a file, not a checkpoint folder"},
	}
	for _, tc := range tests {
		_, loadErr := svc.LoadModel(tc.dir)
		_, inspectErr := svc.InspectModel(tc.dir)
		for _, err := range []error{loadErr, inspectErr} {
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%q: got %v, want %v saying %q", tc.dir, err, tc.want, tc.says)
			}
		}
	}
	if st := svc.ModelStatus(); st.State != model.ModelNone {
		t.Fatalf("a refused load changed the state: %+v", st)
	}
}

func TestLoadFailureIsReported(t *testing.T) {
	svc, rec := newService(t, func(dir string) (api.Engine, error) {
		return nil, errors.New("config.json: missing key hidden_size")
	})
	st, err := svc.LoadModel(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "hidden_size") {
		t.Fatalf("want the opener's error, got %v", err)
	}
	if st.State != model.ModelNone || !strings.Contains(st.Error, "hidden_size") {
		t.Fatalf("status after failed load: %+v", st)
	}
	if got := strings.Join(rec.names(), ","); got != "model,load,load,model,stats" {
		t.Fatalf("events: %s, want model(loading),load(start),load(end),model(none),stats", got)
	}
}

func TestTakeLifecycle(t *testing.T) {
	eng := &testEngine{frames: 5, tick: time.Millisecond, mem: api.Memory{Device: "test", Used: 3 << 20, Peak: 4 << 20, Cap: 8 << 20}}
	svc, rec := newService(t, func(string) (api.Engine, error) { return eng, nil })
	dir := t.TempDir()
	st, err := svc.LoadModel(dir)
	if err != nil || st.State != model.ModelLoaded || st.Info == nil || st.Info.Backend != "cpu" || st.Dir != dir {
		t.Fatalf("load: %+v, %v", st, err)
	}

	take, err := svc.Speak(speech("Hello there."))
	if err != nil || take.ID != 1 || take.State != takes.TakeRunning {
		t.Fatalf("speak: %+v, %v", take, err)
	}
	waitFor(t, func() bool { return svc.Takes()[0].State == takes.TakeFinished })

	got := svc.Takes()[0]
	if got.Finish == nil || got.Finish.Reason != api.FinishStop || got.Frames != 5 {
		t.Fatalf("finished take: %+v", got)
	}
	if !reflect.DeepEqual(eng.got[0], speech("Hello there.")) {
		t.Fatalf("engine got %+v", eng.got[0])
	}
	stats := svc.Stats()
	if !stats.Loaded || stats.Memory == nil || !reflect.DeepEqual(*stats.Memory, eng.mem) || stats.LastTake == nil || stats.LastTake.Frames != 5 {
		t.Fatalf("stats after a take: %+v", stats)
	}
	names := strings.Join(rec.names(), ",")
	if !strings.HasPrefix(names, "model,load,load,model,stats,take,") || !strings.HasSuffix(names, "take,stats") {
		t.Fatalf("events: %s", names)
	}

	if _, err := svc.UnloadModel(); err != nil || !eng.closed {
		t.Fatalf("unload: %v, closed=%v", err, eng.closed)
	}
	if _, err := svc.Speak(speech("Again.")); !errors.Is(err, studio.ErrNoModel) {
		t.Fatalf("speak after unload: %v", err)
	}
}

// TestLexiconInTakes: the settings' pronunciation lexicon rewrites what the
// engine is given, studio and API takes alike, from the next take on.
func TestLexiconInTakes(t *testing.T) {
	eng := &testEngine{frames: 2, tick: time.Millisecond}
	svc, _ := newService(t, func(string) (api.Engine, error) { return eng, nil })
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	st := svc.Settings()
	st.Lexicon = []lexicon.Entry{{Written: "SQL", Spoken: "sequel"}}
	if _, err := svc.SetSettings(st); err != nil {
		t.Fatal(err)
	}
	take, err := svc.Speak(speech("SQL, not sql."))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return svc.Takes()[0].State == takes.TakeFinished })
	got := svc.Takes()[0]
	if got.ID != take.ID || got.Request.Text != "SQL, not sql." || got.Spoken != "sequel, not sql." {
		t.Errorf("the take keeps %q, spoken %q", got.Request.Text, got.Spoken)
	}
	apiEng, err := APIEngine(svc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := apiEng.Synthesize(context.Background(), speech("My SQL."), func(api.Event) {}); err != nil {
		t.Fatal(err)
	}
	if eng.got[0].Text != "sequel, not sql." || eng.got[1].Text != "My sequel." {
		t.Errorf("the engine got %q and %q", eng.got[0].Text, eng.got[1].Text)
	}
}

// TestReadLexicon: the Pronunciations panel's import reads a settings
// file's lexicon (the studio's own, as saved) or an array, and refuses
// anything else as invalid input, saying why.
func TestReadLexicon(t *testing.T) {
	svc, _ := newService(t, func(string) (api.Engine, error) { return &testEngine{}, nil })
	st := svc.Settings()
	st.Lexicon = []lexicon.Entry{{Written: "SQL", Spoken: "sequel"}, {Written: "东京", Spoken: "Tokyo"}}
	saved, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := svc.ReadLexicon(string(saved)); err != nil || !reflect.DeepEqual(got, st.Lexicon) {
		t.Errorf("a settings file: %v, %v", got, err)
	}
	if len(svc.Settings().Lexicon) != 0 {
		t.Error("reading a lexicon changed the settings")
	}
	for _, bad := range []struct{ data, says string }{
		{`[{"written": "Nguyen"}]`, "pronunciation 1: the spoken form"},
		{"Nguyen=Win", "not JSON"},
		{"[" + strings.Repeat(" ", lexicon.MaxFileBytes) + "]", "more than a pronunciations or settings file holds"},
	} {
		if _, err := svc.ReadLexicon(bad.data); !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("ReadLexicon(%.40q): %v, want invalid input saying %q", bad.data, err, bad.says)
		}
	}
}

// TestExportLexicon: the pronunciations written to a file read back as the
// settings hold them (the file another studio imports); a path that is
// not an absolute file is refused, and the browser has no save dialog.
func TestExportLexicon(t *testing.T) {
	svc, _ := newService(t, func(string) (api.Engine, error) { return &testEngine{}, nil })
	st := svc.Settings()
	st.Lexicon = []lexicon.Entry{{Written: "SQL", Spoken: "sequel"}, {Written: "Nguyen", Spoken: "Win"}}
	if _, err := svc.SetSettings(st); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pronunciations.json")
	n, err := svc.ExportLexicon(path)
	if err != nil || n != 2 {
		t.Fatalf("ExportLexicon = %d, %v", n, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := svc.ReadLexicon(string(data)); err != nil || !reflect.DeepEqual(back, st.Lexicon) {
		t.Errorf("the file reads back as %v, %v", back, err)
	}
	for _, bad := range []string{"", "relative.json", filepath.Dir(path)} {
		if _, err := svc.ExportLexicon(bad); !errors.Is(err, studio.ErrInvalid) {
			t.Errorf("ExportLexicon(%q) = %v, want invalid", bad, err)
		}
	}
	if _, err := svc.ChooseLexiconPath(); !errors.Is(err, studio.ErrNoDialog) {
		t.Errorf("ChooseLexiconPath without dialogs: %v", err)
	}
}

// TestSpeakLines: Speak all's lines start together, each a take of its
// own (no group, its own text), running at once; a wrong count, a cast
// voice without a recording, and a start while takes run are refused,
// starting nothing.
func TestSpeakLines(t *testing.T) {
	eng := &testEngine{frames: 20, tick: 2 * time.Millisecond}
	svc, _ := newService(t, func(string) (api.Engine, error) { return eng, nil })
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, api.MaxBatch + 1} {
		if _, err := svc.SpeakLines(make([]voices.CastRequest, n)); !errors.Is(err, studio.ErrInvalid) {
			t.Errorf("%d lines: %v", n, err)
		}
	}
	if _, err := svc.SpeakLines([]voices.CastRequest{{Request: speech("One.")}, {Request: speech("Two."), Cast: []string{"Nobody"}}}); !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), `take 2 of 2: speaker 0: no voice called "Nobody"`) {
		t.Errorf("a cast voice without a recording: %v", err)
	}
	if len(svc.Takes()) != 0 {
		t.Fatalf("a refused start left takes: %v", svc.Takes())
	}
	started, err := svc.SpeakLines([]voices.CastRequest{{Request: speech("One.")}, {Request: speech("Two.")}, {Request: speech("Three.")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 3 || started[0].Group != 0 || started[2].Group != 0 || started[1].Request.Text != "Two." || started[2].State != takes.TakeRunning {
		t.Errorf("started %+v", started)
	}
	if _, err := svc.SpeakLines([]voices.CastRequest{{Request: speech("Four.")}}); !errors.Is(err, studio.ErrBusy) {
		t.Errorf("while the lines run: %v", err)
	}
	waitFor(t, func() bool {
		for _, tk := range svc.Takes() {
			if tk.State != takes.TakeFinished {
				return false
			}
		}
		return true
	})
	eng.mu.Lock()
	got := len(eng.got)
	eng.mu.Unlock()
	if got != 3 {
		t.Errorf("the engine made %d takes, want 3", got)
	}
}

func TestStopKeepsTheTakeAndBusyRefusesASecond(t *testing.T) {
	eng := &testEngine{frames: 1 << 30, tick: time.Millisecond}
	svc, _ := newService(t, func(string) (api.Engine, error) { return eng, nil })
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Speak(speech("A long one.")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return svc.Takes()[0].Frames >= 3 })
	if _, err := svc.Speak(speech("Another.")); !errors.Is(err, studio.ErrBusy) {
		t.Fatalf("second take while one runs: %v, want ErrBusy", err)
	}
	if _, err := svc.LoadModel(t.TempDir()); !errors.Is(err, studio.ErrBusy) {
		t.Fatalf("load while a take runs: %v, want ErrBusy", err)
	}
	stopped, err := svc.Stop()
	if !stopped || err != nil {
		t.Fatalf("stop: %v, %v", stopped, err)
	}
	take := svc.Takes()[0]
	if take.State != takes.TakeFinished || take.Finish.Reason != api.FinishCancel || take.Frames < 3 {
		t.Fatalf("stopped take: %+v", take)
	}
}

func TestUnloadStopsARunningTake(t *testing.T) {
	eng := &testEngine{frames: 1 << 30, tick: time.Millisecond}
	svc, _ := newService(t, func(string) (api.Engine, error) { return eng, nil })
	svc.LoadModel(t.TempDir())
	svc.Speak(speech("Running."))
	if _, err := svc.UnloadModel(); err != nil {
		t.Fatal(err)
	}
	if !eng.closed || svc.Takes()[0].State != takes.TakeFinished {
		t.Fatalf("closed=%v take=%+v", eng.closed, svc.Takes()[0])
	}
}

func TestSpeakValidatesBeforeAskingForAModel(t *testing.T) {
	svc, _ := newService(t, nil)
	req := speech("Hello.")
	req.Sampling.TopP = 0
	if _, err := svc.Speak(req); !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), "top_p") {
		t.Fatalf("got %v, want the top_p error", err)
	}
}

func TestSetSettingsPersistsValidAndRefusesInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	svc, err := New(Config{SettingsPath: path})
	if err != nil {
		t.Fatal(err)
	}
	s := svc.Settings()
	s.Sampling.Temperature, s.Script = 0.6, "Draft."
	if got, err := svc.SetSettings(s); err != nil || !reflect.DeepEqual(got, s) {
		t.Fatalf("set: %+v, %v", got, err)
	}
	onDisk, err := settings.Load(path)
	if err != nil || !reflect.DeepEqual(onDisk, s) {
		t.Fatalf("file holds %+v, %v", onDisk, err)
	}

	bad := s
	bad.Sampling.TopK = -3
	got, err := svc.SetSettings(bad)
	if !errors.Is(err, studio.ErrInvalid) || !reflect.DeepEqual(got, s) || !reflect.DeepEqual(svc.Settings(), s) {
		t.Fatalf("invalid settings: got %+v, %v; stored %+v", got, err, svc.Settings())
	}
	if onDisk, _ := settings.Load(path); !reflect.DeepEqual(onDisk, s) {
		t.Fatalf("invalid settings reached the file: %+v", onDisk)
	}

	again, err := New(Config{SettingsPath: path})
	if err != nil || !reflect.DeepEqual(again.Settings(), s) {
		t.Fatalf("a new service reads %+v, %v", again.Settings(), err)
	}
}

func TestACorruptSettingsFileGivesDefaultsAndAWarning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(path, []byte("{not json"), 0o644)
	svc, err := New(Config{SettingsPath: path})
	if err != nil {
		t.Fatalf("a corrupt settings file stopped the studio: %v", err)
	}
	if !reflect.DeepEqual(svc.Settings(), settings.Default()) {
		t.Fatalf("settings from a corrupt file: %+v", svc.Settings())
	}
	w := svc.Studio().Warnings
	if len(w) != 1 || !strings.Contains(w[0], path) || !strings.Contains(w[0], "default settings") {
		t.Fatalf("warnings: %q", w)
	}
	if b, _ := os.ReadFile(path); string(b) != "{not json" {
		t.Fatalf("the corrupt file was changed before any save: %q", b)
	}
	// The first save keeps the unreadable file aside.
	s := svc.Settings()
	s.Seed = 9
	if _, err := svc.SetSettings(s); err != nil {
		t.Fatal(err)
	}
	if got, err := settings.Load(path); err != nil || got.Seed != 9 {
		t.Fatalf("after save: %+v, %v", got, err)
	}
	// Item 7: a second bad file is kept beside the first, not over it.
	os.WriteFile(path, []byte("{second"), 0o644)
	svc2, _ := New(Config{SettingsPath: path})
	if _, err := svc2.SetSettings(s); err != nil {
		t.Fatal(err)
	}
	bads, _ := filepath.Glob(path + ".bad-*")
	var kept []string
	for _, b := range bads {
		data, _ := os.ReadFile(b)
		kept = append(kept, string(data))
	}
	if len(kept) != 2 || kept[0] == kept[1] || !slices.Contains(kept, "{not json") || !slices.Contains(kept, "{second") {
		t.Fatalf("kept bad files %q hold %q, want both bad versions", bads, kept)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
