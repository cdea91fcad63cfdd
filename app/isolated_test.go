package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"proscenium/app/takes"
	"proscenium/engine/api"
	"proscenium/engine/audio/decode"
	"proscenium/engine/gpuworker"
)

// TestMain lets the test binary be an engine worker (argument
// "engine-worker") serving audioEngine, as `proscenium worker` serves the
// CPU engine.
func TestMain(m *testing.M) {
	decode.ServeWorkerIfAsked() // recordings decoded in a child, as the programs do
	if len(os.Args) > 1 && os.Args[1] == "engine-worker" {
		open := func(ctx context.Context, req gpuworker.LoadRequest, progress func(done, total int64)) (api.Engine, error) {
			entries, err := os.ReadDir(req.Model) // "loads" the model: reads its files
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				if _, err := os.ReadFile(filepath.Join(req.Model, e.Name())); err != nil {
					return nil, err
				}
			}
			return &audioEngine{testEngine: testEngine{frames: 2000, tick: 5 * time.Millisecond, mem: api.Memory{Device: "worker", Used: 7}}}, nil
		}
		if err := gpuworker.ServeEngine(os.Stdin, os.Stdout, gpuworker.Hello{PID: os.Getpid()}, open); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// audioEngine is testEngine with one chunk of audio per frame.
type audioEngine struct{ testEngine }

func (e *audioEngine) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	e.frames = min(e.frames, req.MaxFrames) // testEngine ignores MaxFrames; each worker here runs one take
	return e.testEngine.Synthesize(ctx, req, func(ev api.Event) {
		emit(ev)
		if ev.Kind == api.EventFrames {
			f := ev.Frames - 1
			emit(api.Event{Kind: api.EventAudio, Audio: &api.AudioChunk{FromFrame: f, ToFrame: f + 1, PCM: make([]float32, 2048)}})
		}
	})
}

// The studio with its engine in a worker process: the readouts keep
// answering during a take (no engine call under the service lock); a worker
// killed mid-take fails that take with an error naming the worker and keeps
// its audio; the next take runs in a fresh worker.
func TestStudioWithAnEngineWorker(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := newService(t, func(dir string) (api.Engine, error) {
		return gpuworker.OpenIsolated(context.Background(), exe, gpuworker.Options{Args: []string{"engine-worker"}},
			gpuworker.LoadRequest{Model: dir, Backend: "cpu"}, nil)
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "weights.bin"), make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.LoadModel(dir); err != nil {
		t.Fatal(err)
	}
	// The worker read the files: the load's progress counts its reads.
	if p := svc.LoadStatus(); !p.Done || p.Total < 4<<20 || p.Read != p.Total {
		t.Fatalf("load progress through the worker: %+v", p)
	}
	if st := svc.Stats(); st.Memory == nil || st.Memory.Device != "worker" || st.Memory.Used != 7 {
		t.Fatalf("stats from the worker: %+v", st)
	}
	take, err := svc.Speak(speech("A take to interrupt."))
	if err != nil {
		t.Fatal(err)
	}
	framesOf := func(id int) takes.Take {
		for _, tk := range svc.Takes() {
			if tk.ID == id {
				return tk
			}
		}
		t.Fatalf("take %d not listed", id)
		return takes.Take{}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // readouts during the take
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				svc.Stats()
				svc.Takes()
			}
		}
	}()
	waitFor(t, func() bool { return framesOf(take.ID).Samples >= 3*2048 })
	eng, err := LoadedEngine(svc)
	if err != nil {
		t.Fatal(err)
	}
	pid := gpuworker.PID(eng)
	if pid == 0 {
		t.Fatal("no worker pid")
	}
	if p, err := os.FindProcess(pid); err != nil || p.Kill() != nil {
		t.Errorf("killing worker %d", pid)
	}
	waitFor(t, func() bool { return framesOf(take.ID).State != takes.TakeRunning })
	close(stop)
	wg.Wait()
	failed := framesOf(take.ID)
	if failed.State != takes.TakeFailed || !strings.Contains(failed.Error, fmt.Sprintf("pid %d", pid)) || !strings.Contains(failed.Error, "killed") {
		t.Fatalf("take on a killed worker: %+v", failed)
	}
	if failed.Samples < 3*2048 {
		t.Fatalf("the failed take kept %d samples, want the audio delivered before the kill", failed.Samples)
	}

	next, err := svc.Speak(api.SpeechRequest{Text: "Again.", Sampling: api.DefaultSampling(), Seed: 1, MaxFrames: 4})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return framesOf(next.ID).State != takes.TakeRunning })
	if got := framesOf(next.ID); got.State != takes.TakeFinished || got.Frames != 4 || got.Samples != 4*2048 {
		t.Fatalf("take after the restart: %+v", got)
	}
}
