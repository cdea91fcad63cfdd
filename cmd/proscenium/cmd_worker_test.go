package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"proscenium/engine"
	"proscenium/engine/audio"
	"proscenium/engine/gpuworker"
)

// takeWAV runs req on eng and returns its 16-bit WAV bytes and codes.
func takeWAV(t *testing.T, eng engine.Engine, req engine.SpeechRequest) ([]byte, [][]int) {
	t.Helper()
	pcm, fin, err := runTake(eng, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	wav, err := audio.EncodeWAV(pcm, eng.Info().SampleRate, audio.PCM16)
	if err != nil {
		t.Fatal(err)
	}
	return wav, fin.Codes
}

// synth --isolate (the demo model in a child `proscenium worker`) writes the
// in-process take's WAV and codes byte for byte.
func TestSynthIsolatedEqualsInProcess(t *testing.T) {
	model := demoCheckpoint(t)
	out := t.TempDir()
	files := func(name string, extra ...string) ([]byte, []byte) {
		wav, codes := filepath.Join(out, name+".wav"), filepath.Join(out, name+".npy")
		args := append([]string{"--model", model, "--text", "Across the boundary.", "--seed", "11", "--max-frames", "12",
			"--out", wav, "--codes", codes}, extra...)
		var log bytes.Buffer
		if err := runSynth(args, &log); err != nil {
			t.Fatal(err)
		}
		if isolated := strings.Contains(log.String(), "engine worker pid"); isolated != (len(extra) > 0) {
			t.Fatalf("synth %v: log %q", extra, log.String())
		}
		w, err := os.ReadFile(wav)
		if err != nil {
			t.Fatal(err)
		}
		c, err := os.ReadFile(codes)
		if err != nil {
			t.Fatal(err)
		}
		return w, c
	}
	wantWAV, wantCodes := files("local")
	gotWAV, gotCodes := files("isolated", "--isolate")
	if !bytes.Equal(gotWAV, wantWAV) || !bytes.Equal(gotCodes, wantCodes) {
		t.Fatal("synth --isolate differs from the in-process take")
	}
}

// A worker killed mid-take ends that take with an error naming it, after
// the audio it sent; the next take runs in a fresh worker and equals the
// in-process take.
func TestKilledWorkerIsReportedAndReplaced(t *testing.T) {
	model := demoCheckpoint(t)
	req := engine.SpeechRequest{Text: "Across the boundary.", Sampling: engine.DefaultSampling(), Seed: 11, MaxFrames: 12}
	local, err := openEngine(model, false)
	if err != nil {
		t.Fatal(err)
	}
	wantWAV, wantCodes := takeWAV(t, local, req)
	local.Close()

	ctx := context.Background()
	eng, err := openEngine(model, true)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if info := eng.Info(); info.Backend != "cpu" || info.Model != model {
		t.Fatalf("isolated engine info %+v", info)
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
