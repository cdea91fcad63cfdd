package app

import (
	"sync"
	"testing"

	"proscenium/app/internal/enginetest"
	"proscenium/app/playback"
	"proscenium/app/settings"
	"proscenium/engine/api"
)

// fakeSpeaker records what the service asks of the sound card.
type fakeSpeaker struct {
	playback.NoSpeaker
	mu      sync.Mutex
	chunks  []int // samples per live chunk
	targets []int
	played  []int // take ids
	offset  int64
	pcm     []float32
	stopped int
	playing int
	enabled []bool
}

func (f *fakeSpeaker) SetEnabled(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.enabled = append(f.enabled, on)
}

type fakeLive struct{ s *fakeSpeaker }

func (f *fakeSpeaker) StartLive(int) playback.LiveTake { return fakeLive{f} }
func (l fakeLive) Chunk(pcm []float32, target int) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.chunks = append(l.s.chunks, len(pcm))
	l.s.targets = append(l.s.targets, target)
}
func (l fakeLive) End() int { return 3 }
func (f *fakeSpeaker) Play(id int, pcm []float32, offset int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.played, f.pcm, f.offset, f.playing = append(f.played, id), pcm, offset, id
	return nil
}
func (f *fakeSpeaker) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped++
	f.playing = 0
}
func (f *fakeSpeaker) Playback() playback.PlaybackStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return playback.PlaybackStatus{State: playback.PlayPlaying, TakeID: f.playing}
}

func TestServiceDrivesTheSpeaker(t *testing.T) {
	spk := &fakeSpeaker{}
	svc, err := New(Config{Speaker: spk, TakesDir: t.TempDir(),
		Open: func(string) (api.Engine, error) { return &enginetest.PCM{Frames: 7}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Shutdown(svc) })
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	tk := speakAndWait(t, svc, speech("Play me."))
	if len(spk.chunks) != 3 || spk.chunks[0] != enginetest.SamplesPerFrame || spk.chunks[1] != 2*enginetest.SamplesPerFrame || spk.chunks[2] != 4*enginetest.SamplesPerFrame {
		t.Fatalf("live chunks %v, want 1, 2, 4 frames", spk.chunks)
	}
	if tk.Underruns != 3 {
		t.Fatalf("the take records %d underruns, the speaker reported 3", tk.Underruns)
	}
	// Replay from 0.1 s reads the stored take.
	if _, err := svc.Play(PlayRequest{ID: tk.ID, At: 0.1}); err != nil {
		t.Fatal(err)
	}
	if spk.offset != 4410 || len(spk.pcm) != 7*enginetest.SamplesPerFrame || spk.pcm[100] != enginetest.Signal(100) {
		t.Fatalf("play: offset %d, %d samples", spk.offset, len(spk.pcm))
	}
	if _, err := svc.Play(PlayRequest{ID: tk.ID, At: -1}); err == nil {
		t.Fatal("a negative position was accepted")
	}
	// Deleting the take that plays stops it.
	if _, err := svc.DeleteTake(tk.ID); err != nil {
		t.Fatal(err)
	}
	if spk.stopped != 1 {
		t.Fatalf("stopped %d times", spk.stopped)
	}
	// output_device "off" reaches the speaker.
	s := svc.Settings()
	s.OutputDevice = settings.OutputOff
	if _, err := svc.SetSettings(s); err != nil {
		t.Fatal(err)
	}
	if n := len(spk.enabled); n < 2 || !spk.enabled[0] || spk.enabled[n-1] {
		t.Fatalf("SetEnabled calls %v, want true at start and false last", spk.enabled)
	}
}
