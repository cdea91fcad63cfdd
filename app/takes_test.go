package app

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"proscenium/app/internal/enginetest"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/engine/api"
	"proscenium/engine/audio/pcm"
)

func newTakesService(t *testing.T, dir string, frames int) *Service {
	t.Helper()
	svc, err := New(Config{Open: func(string) (api.Engine, error) { return &enginetest.PCM{Frames: frames}, nil }, TakesDir: dir,
		Events: studio.NewHub()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Shutdown(svc) })
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	return svc
}

func speakAndWait(t *testing.T, svc *Service, req api.SpeechRequest) takes.Take {
	t.Helper()
	tk, err := svc.Speak(req)
	if err != nil {
		t.Fatal(err)
	}
	var got takes.Take
	waitFor(t, func() bool {
		for _, x := range svc.Takes() {
			if x.ID == tk.ID && x.State != takes.TakeRunning {
				got = x
				return true
			}
		}
		return false
	})
	return got
}

func TestTakesPersistWithPCMCodesAndFigures(t *testing.T) {
	dir := t.TempDir()
	svc := newTakesService(t, dir, 9)
	ended := make(chan takes.Take, 1)
	svc.events.Subscribe(func(e studio.Event) {
		if tk, ok := e.Data.(takes.Take); ok && tk.State != takes.TakeRunning {
			ended <- tk
		}
	})
	req := speech("Hello <whisper>there</whisper>.")
	tk := speakAndWait(t, svc, req)
	if ev := <-ended; !ev.Stored || ev.State != takes.TakeFinished {
		t.Fatalf("the take's last event says %+v", ev)
	}
	if tk.State != takes.TakeFinished || !tk.Stored || tk.Samples != 9*enginetest.SamplesPerFrame || tk.Finish.Frames != 9 {
		t.Fatalf("take: %+v", tk)
	}
	pcm, _, err := svc.takes.TakePCM(tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range pcm {
		if v != enginetest.Signal(i) {
			t.Fatalf("sample %d: %v, want %v", i, v, enginetest.Signal(i))
		}
	}
	peaks, err := svc.TakePeaks(tk.ID)
	if err != nil || len(peaks.Values) != 2*9*enginetest.SamplesPerFrame/takes.PeakBucket {
		t.Fatalf("peaks: %d values, %v", len(peaks.Values), err)
	}
	if _, err := svc.RenameTake(takes.TakeName{ID: tk.ID, Name: "  First read  "}); err != nil {
		t.Fatal(err)
	}

	// A new service over the same directory finds the take as it was.
	again := newTakesService(t, dir, 9)
	list := again.Takes()
	if len(list) != 1 {
		t.Fatalf("reloaded %d takes", len(list))
	}
	got := list[0]
	if got.ID != tk.ID || got.Name != "First read" || !reflect.DeepEqual(got.Request, req) || got.Finish.Reason != api.FinishStop ||
		got.Finish.RealTimeFactor != tk.Finish.RealTimeFactor || !got.Stored {
		t.Fatalf("reloaded take: %+v", got)
	}
	meta, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(tk.ID), "take.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stored struct{ Codes [][]int }
	if err := json.Unmarshal(meta, &stored); err != nil || len(stored.Codes) != 9 || stored.Codes[8][1] != 9 {
		t.Fatalf("codes: %v (%v)", stored.Codes, err)
	}
	pcm2, _, err := again.takes.TakePCM(tk.ID)
	if err != nil || len(pcm2) != len(pcm) || pcm2[1234] != pcm[1234] {
		t.Fatalf("reloaded pcm: %d samples, %v", len(pcm2), err)
	}
	// The next take gets the next id.
	if tk2 := speakAndWait(t, again, req); tk2.ID != tk.ID+1 {
		t.Fatalf("next id %d", tk2.ID)
	}
	if ok, err := again.DeleteTake(tk.ID); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "1")); !os.IsNotExist(err) {
		t.Fatalf("deleted take still on disk: %v", err)
	}
	if _, err := again.DeleteTake(tk.ID); !errors.Is(err, studio.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestCorruptTakeDirectoriesAreSkippedAndReported(t *testing.T) {
	dir := t.TempDir()
	svc := newTakesService(t, dir, 3)
	speakAndWait(t, svc, speech("One."))
	speakAndWait(t, svc, speech("Two."))
	speakAndWait(t, svc, speech("Three."))
	Shutdown(svc)
	os.WriteFile(filepath.Join(dir, "1", "take.json"), []byte(`{"format":1,`), 0o644) // truncated JSON
	os.Truncate(filepath.Join(dir, "2", "pcm.f32"), 100)                              // short audio
	os.MkdirAll(filepath.Join(dir, ".take-9-123"), 0o755)                             // an interrupted save

	again := newTakesService(t, dir, 3)
	list := again.Takes()
	if len(list) != 1 || list[0].ID != 3 {
		t.Fatalf("takes after corruption: %+v", list)
	}
	w := strings.Join(again.Studio().Warnings, "\n")
	if !strings.Contains(w, filepath.Join(dir, "1")) || !strings.Contains(w, filepath.Join(dir, "2")) || strings.Contains(w, ".take-9") {
		t.Fatalf("warnings:\n%s", w)
	}
}

func TestTakesLimitEvictsTheOldest(t *testing.T) {
	dir := t.TempDir()
	svc := newTakesService(t, dir, 40) // 40 frames = 327,680 bytes of audio
	s := svc.Settings()
	s.TakesLimitBytes = 1 << 20 // three such takes fit, not four
	if _, err := svc.SetSettings(s); err != nil {
		t.Fatal(err)
	}
	var notices []string
	svc.events.Subscribe(func(e studio.Event) {
		if n, ok := e.Data.(studio.Notice); ok {
			notices = append(notices, n.Text)
		}
	})
	for i := 0; i < 4; i++ {
		speakAndWait(t, svc, speech("Again."))
	}
	var ids []int
	for _, tk := range svc.Takes() {
		ids = append(ids, tk.ID)
	}
	if len(ids) != 3 || ids[2] != 2 {
		t.Fatalf("takes after the limit: %v", ids)
	}
	if _, err := os.Stat(filepath.Join(dir, "1")); !os.IsNotExist(err) {
		t.Fatal("evicted take still on disk")
	}
	if st := svc.Studio(); st.TakesBytes > st.TakesLimit {
		t.Fatalf("%d bytes stored over the %d limit", st.TakesBytes, st.TakesLimit)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "removed the oldest take #1") {
		t.Fatalf("notices: %q", notices)
	}

	// A take larger than the whole limit is kept for the session only.
	svc2 := newTakesService(t, t.TempDir(), 200) // 1.6 MB
	s.MaxFrames = 200
	svc2.SetSettings(s)
	tk := speakAndWait(t, svc2, api.SpeechRequest{Text: "Long.", Sampling: api.DefaultSampling(), MaxFrames: 300})
	if tk.Stored || tk.Samples != 200*enginetest.SamplesPerFrame {
		t.Fatalf("oversize take: %+v", tk)
	}
	if _, _, err := svc2.takes.TakePCM(tk.ID); err != nil {
		t.Fatal(err)
	}
}

func TestRerunChangesOneSetting(t *testing.T) {
	svc := newTakesService(t, "", 2)
	first := speakAndWait(t, svc, speech("Once more."))
	tests := []struct {
		r    takes.Rerun
		want func(*api.SpeechRequest)
		err  error
	}{
		{takes.Rerun{ID: first.ID, Setting: "temperature", Value: 0.5}, func(r *api.SpeechRequest) { r.Sampling.Temperature = 0.5 }, nil},
		{takes.Rerun{ID: first.ID, Setting: "seed", Value: 77}, func(r *api.SpeechRequest) { r.Seed = 77 }, nil},
		{takes.Rerun{ID: first.ID, Setting: "top_k", Value: 1.5}, nil, studio.ErrInvalid},
		{takes.Rerun{ID: first.ID, Setting: "top_p", Value: 2}, nil, studio.ErrInvalid},
		{takes.Rerun{ID: first.ID, Setting: "voice", Value: 1}, nil, studio.ErrInvalid},
		{takes.Rerun{ID: 99, Setting: "seed", Value: 1}, nil, studio.ErrNotFound},
	}
	for _, tc := range tests {
		tk, err := svc.RerunTake(tc.r)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%+v: got %v, want %v", tc.r, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", tc.r, err)
		}
		want := first.Request
		tc.want(&want)
		if !reflect.DeepEqual(tk.Request, want) || !strings.Contains(tk.Name, tc.r.Setting) {
			t.Errorf("%+v: request %+v name %q, want %+v", tc.r, tk.Request, tk.Name, want)
		}
		waitFor(t, func() bool { return svc.Takes()[0].State != takes.TakeRunning })
	}
}

func TestExportWritesWAVAndRaw(t *testing.T) {
	svc := newTakesService(t, t.TempDir(), 3)
	tk := speakAndWait(t, svc, speech("Export me."))
	out := t.TempDir()
	for _, f := range []string{takes.ExportWAV16, takes.ExportWAVFloat, takes.ExportRaw16, takes.ExportRawFloat} {
		path := filepath.Join(out, "take."+f)
		res, err := svc.ExportTake(takes.ExportRequest{ID: tk.ID, Path: path, Format: f})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		data, _ := os.ReadFile(path)
		if int64(len(data)) != res.Bytes || res.Samples != 3*enginetest.SamplesPerFrame {
			t.Fatalf("%s: %d bytes on disk, result %+v", f, len(data), res)
		}
		var got []float32
		switch f {
		case takes.ExportWAV16, takes.ExportWAVFloat:
			w, err := pcm.ParseWAV(data)
			if err != nil || w.Rate != 44100 || w.Channels != 1 {
				t.Fatalf("%s: %+v %v", f, w, err)
			}
			got = w.Samples
		case takes.ExportRaw16:
			for i := 0; i+1 < len(data); i += 2 {
				got = append(got, float32(int16(uint16(data[i])|uint16(data[i+1])<<8))/32767)
			}
		case takes.ExportRawFloat:
			got = decodeFloat32LE(data)
		}
		if len(got) != 3*enginetest.SamplesPerFrame {
			t.Fatalf("%s: %d samples", f, len(got))
		}
		tol := float32(0)
		if f == takes.ExportWAV16 || f == takes.ExportRaw16 {
			tol = 0.5 / 32767 // rounding to the nearest step
		}
		for i, v := range got {
			if d := v - enginetest.Signal(i); d > tol+1e-7 || d < -tol-1e-7 {
				t.Fatalf("%s sample %d: %v, want %v", f, i, v, enginetest.Signal(i))
			}
		}
	}
}

func decodeFloat32LE(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out
}

// Item 1: a take folder that cannot be read is never reused or removed:
// new takes get ids above every numeric folder.
func TestUnreadableTakeFolderIsNeverReused(t *testing.T) {
	dir := t.TempDir()
	svc := newTakesService(t, dir, 3)
	speakAndWait(t, svc, speech("One."))
	speakAndWait(t, svc, speech("Two."))
	Shutdown(svc)
	os.Truncate(filepath.Join(dir, "2", "pcm.f32"), 100)
	before, _ := os.ReadFile(filepath.Join(dir, "2", "take.json"))

	again := newTakesService(t, dir, 3)
	if w := strings.Join(again.Studio().Warnings, "\n"); !strings.Contains(w, "skipped take "+filepath.Join(dir, "2")) {
		t.Fatalf("warnings: %s", w)
	}
	tk := speakAndWait(t, again, speech("Three."))
	if tk.ID != 3 || !tk.Stored {
		t.Fatalf("new take after an unreadable #2: %+v", tk)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "2", "take.json"))
	if fi, err := os.Stat(filepath.Join(dir, "2", "pcm.f32")); err != nil || fi.Size() != 100 || string(after) != string(before) {
		t.Fatalf("the unreadable folder was changed: %v %v", fi, err)
	}
	// A folder that appears under a new take's id (another studio) is not replaced.
	os.MkdirAll(filepath.Join(dir, "4"), 0o755)
	os.WriteFile(filepath.Join(dir, "4", "mine.txt"), []byte("keep"), 0o644)
	tk = speakAndWait(t, again, speech("Four."))
	if b, _ := os.ReadFile(filepath.Join(dir, "4", "mine.txt")); tk.ID != 4 || tk.Stored || string(b) != "keep" {
		t.Fatalf("take #4 over a foreign folder 4: %+v, mine.txt %q", tk, b)
	}
}

// Item 6: what interrupted saves left (our own temporary names only) is
// removed at start; anything else, and a save still in progress, is left.
func TestInterruptedSavesAreCleanedAtStart(t *testing.T) {
	dir := t.TempDir()
	svc := newTakesService(t, dir, 3)
	speakAndWait(t, svc, speech("One."))
	Shutdown(svc)
	old := time.Now().Add(-time.Hour)
	mk := func(path string, size int, stale bool) {
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, make([]byte, size), 0o644)
		if stale {
			os.Chtimes(path, old, old)
			os.Chtimes(filepath.Dir(path), old, old)
		}
	}
	mk(filepath.Join(dir, ".take-7-123456", "pcm.f32"), 5000, true) // a killed take save
	mk(filepath.Join(dir, "1", ".take.json.98765"), 300, true)      // a killed rename
	mk(filepath.Join(dir, ".take-8-555", "pcm.f32"), 7000, false)   // a save in progress elsewhere
	mk(filepath.Join(dir, ".take-notes", "x"), 10, true)            // not our name
	mk(filepath.Join(dir, "1", ".take.json.4242"), 10, false)       // a rename in progress: left, counted
	mk(filepath.Join(dir, "notes.txt"), 10, true)                   // foreign file

	again := newTakesService(t, dir, 3)
	for _, gone := range []string{".take-7-123456", "1/.take.json.98765"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s was not cleaned: %v", gone, err)
		}
	}
	for _, kept := range []string{".take-8-555", ".take-notes/x", "1/.take.json.4242", "notes.txt", "1/" + "pcm.f32"} {
		if _, err := os.Stat(filepath.Join(dir, kept)); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
	// The save in progress counts against the limit; new ids pass its id.
	st := again.Studio()
	var take1 int64
	for _, f := range []string{"take.json", "pcm.f32"} {
		fi, err := os.Stat(filepath.Join(dir, "1", f))
		if err != nil {
			t.Fatal(err)
		}
		take1 += fi.Size()
	}
	if want := take1 + 7000 + 10; st.TakesBytes != want {
		t.Errorf("stored bytes %d, want %d (take #1, the save in progress and the recent temp file)", st.TakesBytes, want)
	}
	if tk := speakAndWait(t, again, speech("Two.")); tk.ID != 9 {
		t.Errorf("next take id %d, want 9 (above the interrupted .take-8)", tk.ID)
	}
}

// Item 6: a settings save killed midway leaves .settings.json.<random>;
// the next start removes it once stale, and nothing else beside it.
func TestInterruptedSettingsSaveIsCleanedAtStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{".settings.json.12345", ".settings.json.777", "settings.json.bad-20261130T170000Z", ".other.json.1"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
		if name != ".settings.json.777" {
			os.Chtimes(filepath.Join(dir, name), old, old)
		}
	}
	svc, err := New(Config{SettingsPath: path})
	if err != nil {
		t.Fatal(err)
	}
	Shutdown(svc)
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != ".other.json.1 .settings.json.777 settings.json.bad-20261130T170000Z" {
		t.Fatalf("left: %v", left)
	}
}

// Item 6: an export killed midway leaves .<name>.tmp-<digits> beside the
// target; at start the export folder loses those of our proposed names.
func TestInterruptedExportIsCleanedAtStart(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	names := []string{
		".proscenium-take-3.wav.tmp-12345",   // ours, stale: removed
		".proscenium-take-4-intro.pcm.tmp-9", // ours, stale: removed
		".proscenium-take-5.wav.tmp-777",     // ours, recent: an export in progress
		".proscenium-take-6.wav.tmp-abc",     // not our pattern
		".song.wav.tmp-123",                  // another name
		"proscenium-take-3.wav",              // an export
	}
	for _, n := range names {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
		if n != ".proscenium-take-5.wav.tmp-777" {
			os.Chtimes(filepath.Join(dir, n), old, old)
		}
	}
	svc, err := New(Config{ExportDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	Shutdown(svc)
	for i, n := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		if gone := os.IsNotExist(err); gone != (i < 2) {
			t.Errorf("%s: removed %v", n, gone)
		}
	}
}

// Issue 32: 1000 speech-API requests of one frame pushed a named studio
// take out (the list's cap and the size limit evicted oldest first, API
// and studio takes alike). API takes now make room only among API takes:
// both studio takes stay, on disk, and the API takes keep to half the
// limit and their own cap, each removal announced.
func TestAPITakesLeaveStudioTakes(t *testing.T) {
	dir := t.TempDir()
	svc := newTakesService(t, dir, 1)
	s := svc.Settings()
	s.TakesLimitBytes = 1 << 20
	if _, err := svc.SetSettings(s); err != nil {
		t.Fatal(err)
	}
	removed := 0
	svc.events.Subscribe(func(e studio.Event) {
		if n, ok := e.Data.(studio.Notice); ok && strings.Contains(n.Text, "removed") {
			removed++
		}
	})
	named := speakAndWait(t, svc, speech("Keep me."))
	if _, err := svc.RenameTake(takes.TakeName{ID: named.ID, Name: "The keeper"}); err != nil {
		t.Fatal(err)
	}
	plain := speakAndWait(t, svc, speech("Me too."))
	eng, err := APIEngine(svc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if _, err := eng.Synthesize(context.Background(), speech("From the API."), func(api.Event) {}); err != nil {
			t.Fatalf("API take %d: %v", i, err)
		}
	}
	var apiTakes, apiBytes int
	found := map[int]takes.Take{}
	for _, tk := range svc.Takes() {
		found[tk.ID] = tk
		if tk.Source == takes.SourceAPI {
			apiTakes++
		}
	}
	for _, id := range []int{named.ID, plain.ID} {
		tk, ok := found[id]
		if !ok || !tk.Stored {
			t.Fatalf("studio take #%d after 1000 API takes: %+v (present %v)", id, tk, ok)
		}
		if _, err := os.Stat(filepath.Join(dir, strconv.Itoa(id))); err != nil {
			t.Errorf("studio take #%d is not on disk: %v", id, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if id, err := strconv.Atoi(e.Name()); err == nil && found[id].Source == takes.SourceAPI {
			apiBytes += int(dirSize(t, filepath.Join(dir, e.Name())))
		}
	}
	if apiTakes > 1000 || apiBytes > 1<<19 || removed == 0 {
		t.Errorf("%d API takes listed, %d bytes of them on disk (half the limit is %d), %d removals announced", apiTakes, apiBytes, 1<<19, removed)
	}
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	return n
}
