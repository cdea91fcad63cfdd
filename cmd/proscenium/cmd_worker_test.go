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

	"proscenium/engine/api"
	"proscenium/engine/audio/pcm"
	"proscenium/engine/gpuworker"
	"proscenium/engine/open"
)

// takeWAV runs req on eng and returns its 16-bit WAV bytes and codes.
func takeWAV(t *testing.T, eng api.Engine, req api.SpeechRequest) ([]byte, [][]int) {
	t.Helper()
	samples, fin, err := runTake(eng, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	wav, err := pcm.EncodeWAV(samples, eng.Info().SampleRate, pcm.PCM16)
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
	req := api.SpeechRequest{Text: "Across the boundary.", Sampling: api.DefaultSampling(), Seed: 11, MaxFrames: 12}
	local, err := open.Open(context.Background(), model, open.Options{Backend: open.CPU})
	if err != nil {
		t.Fatal(err)
	}
	wantWAV, wantCodes := takeWAV(t, local, req)
	local.Close()

	ctx := context.Background()
	eng, err := open.Open(context.Background(), model, open.Options{Backend: open.CPU, Isolate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if info := eng.Info(); info.Backend != "cpu" || info.Model != model {
		t.Fatalf("isolated engine info %+v", info)
	}
	pid := gpuworker.PID(eng)
	long := api.SpeechRequest{Text: "A long take to interrupt.", Sampling: api.DefaultSampling(), Seed: 5, MaxFrames: 400}
	chunks := 0
	_, err = eng.Synthesize(ctx, long, func(ev api.Event) {
		if ev.Kind == api.EventAudio {
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

// fakeGPUEnv makes the test binary a GPU worker whose hello lists the
// backends in the variable's value (comma-separated; "" for none). Its
// loads fail with a message of its own, so a test sees which worker a load
// reached.
const fakeGPUEnv = "PROSCENIUM_TEST_FAKE_GPU"

func fakeGPUWorker(backends string) int {
	hello := gpuworker.Hello{PID: os.Getpid(), Device: gpuworker.Device{Name: "Fake GPU", CCMajor: 9, TotalMem: 1 << 30}}
	if backends != "" {
		hello.Backends = strings.Split(backends, ",")
	}
	err := gpuworker.ServeEngine(os.Stdin, os.Stdout, hello, func(ctx context.Context, req gpuworker.LoadRequest, progress func(done, total int64)) (api.Engine, error) {
		return nil, errors.New("fake GPU worker: no model loads here")
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// --backend auto opens the CPU backend when the GPU worker cannot serve the
// model, keeping why, also in a worker process with --isolate; auto and cuda
// reach a GPU worker that serves cuda.
func TestBackendChoiceThroughTheGPUWorker(t *testing.T) {
	model := demoCheckpoint(t)
	ctx := context.Background()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	noDevice := filepath.Join(t.TempDir(), "proscenium-gpu")
	// What gorgonia.org/cu prints in its init on a machine without a GPU.
	script := "#!/bin/sh\necho 'Error in initialization, please refer to \"https://docs.nvidia.com\" for details on: NoDevice'\nexit 1\n"
	if err := os.WriteFile(noDevice, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, worker, backends, backend string
		isolate                         bool
		wantBackend, wantReason         string // or
		wantErr                         string
	}{
		{name: "auto without a GPU", worker: noDevice, backend: open.Auto, wantBackend: "cpu", wantReason: "no CUDA-capable GPU found"},
		{name: "auto without a GPU, isolated", worker: noDevice, backend: open.Auto, isolate: true, wantBackend: "cpu", wantReason: "no CUDA-capable GPU found"},
		{name: "auto with a GPU worker that serves no cuda", worker: exe, backend: open.Auto, wantBackend: "cpu", wantReason: "does not serve the cuda backend"},
		{name: "auto with a GPU worker that serves cuda", worker: exe, backends: "cuda", backend: open.Auto, wantErr: "fake GPU worker: no model loads here"},
		{name: "cuda", worker: exe, backends: "cuda", backend: open.CUDA, wantErr: "fake GPU worker: no model loads here"},
		{name: "cuda without a GPU", worker: noDevice, backend: open.CUDA, wantErr: "no CUDA-capable GPU found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.worker == exe {
				t.Setenv(fakeGPUEnv, c.backends)
			}
			eng, err := open.Open(ctx, model, open.Options{Backend: c.backend, Worker: c.worker, Isolate: c.isolate})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			if info := eng.Info(); info.Backend != c.wantBackend || !strings.Contains(info.BackendReason, c.wantReason) {
				t.Fatalf("backend %q (%s), want %q saying %q", info.Backend, info.BackendReason, c.wantBackend, c.wantReason)
			}
			isolated := gpuworker.PID(eng) != 0
			if isolated != c.isolate || strings.Contains(eng.Info().BackendReason, "in a worker process") != c.isolate {
				t.Fatalf("in a worker process: %v (reason %q), want %v", isolated, eng.Info().BackendReason, c.isolate)
			}
		})
	}
}

// The voice cache's size crosses to the worker (LoadRequest): its engine's
// cache is the size asked for.
func TestIsolatedVoiceCacheSize(t *testing.T) {
	model := demoCheckpoint(t)
	eng, err := open.Open(context.Background(), model, open.Options{Backend: open.CPU, Isolate: true, VoiceCacheBytes: 96 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if gpuworker.PID(eng) == 0 {
		t.Fatal("not in a worker")
	}
	if cp := eng.Stats().Memory.VoiceCacheCap; cp != 96<<20 {
		t.Fatalf("the worker's voice cache holds at most %d bytes, want the 96 MiB asked for", cp)
	}
}
