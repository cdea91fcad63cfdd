package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"proscenium/engine"
	"proscenium/engine/audio"
	"proscenium/engine/gpuworker"
)

// TestMain lets the test binary be `proscenium worker`: --isolate starts this
// executable with the argument worker, as the real program does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		if err := runWorker(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "proscenium worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// takeWAV runs req on eng and returns its 16-bit WAV bytes and codes.
func takeWAV(t *testing.T, eng engine.Engine, req engine.SpeechRequest) ([]byte, [][]int) {
	t.Helper()
	pcm, fin, err := runTake(eng, req)
	if err != nil {
		t.Fatal(err)
	}
	wav, err := audio.EncodeWAV(pcm, eng.Info().SampleRate, audio.PCM16)
	if err != nil {
		t.Fatal(err)
	}
	return wav, fin.Codes
}

// The demo model in a child `proscenium worker` gives the in-process take's
// WAV bytes and codes; killed mid-take, the worker ends that take with an
// error naming it after the audio it sent, and the next take runs in a fresh
// worker, again equal to the in-process take.
func TestIsolatedEngine(t *testing.T) {
	model := demoCheckpoint(t)
	req := engine.SpeechRequest{Text: "Across the boundary.", Sampling: engine.DefaultSampling(), Seed: 11, MaxFrames: 12}

	local, err := engine.Open(model, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantWAV, wantCodes := takeWAV(t, local, req)
	local.Close()

	ctx := context.Background()
	eng, err := openIsolated(ctx, model)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if info := eng.Info(); info.Backend != "cpu" || info.Model != model {
		t.Fatalf("isolated engine info %+v", info)
	}
	gotWAV, gotCodes := takeWAV(t, eng, req)
	if !bytes.Equal(gotWAV, wantWAV) || !reflect.DeepEqual(gotCodes, wantCodes) {
		t.Fatal("the isolated take differs from the in-process take")
	}

	pid := gpuworker.PID(eng)
	long := engine.SpeechRequest{Text: "A long take to interrupt.", Sampling: engine.DefaultSampling(), Seed: 5, MaxFrames: 400}
	chunks := 0
	_, err = eng.Synthesize(ctx, long, func(ev engine.Event) {
		if ev.Kind == engine.EventAudio {
			if chunks++; chunks == 1 {
				if p, err := os.FindProcess(pid); err != nil || p.Kill() != nil {
					t.Errorf("killing worker %d", pid)
				}
			}
		}
	})
	var died *gpuworker.WorkerDiedError
	if !errors.As(err, &died) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", pid)) || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("take on a killed worker: %v", err)
	}
	if chunks < 1 {
		t.Fatal("no audio delivered before the kill")
	}
	againWAV, againCodes := takeWAV(t, eng, req)
	if !bytes.Equal(againWAV, wantWAV) || !reflect.DeepEqual(againCodes, wantCodes) {
		t.Fatal("the take in the restarted worker differs from the in-process take")
	}
	if p := gpuworker.PID(eng); p == 0 || p == pid {
		t.Fatalf("worker pid %d after the restart (was %d)", p, pid)
	}
}
