package model

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"proscenium/engine/gpuworker"
)

// studioGPU waits for the probe to report and returns the status line.
func studioGPU(t *testing.T, probe GPUProbe) string {
	t.Helper()
	c := New(Config{})
	c.ProbeGPU(probe)
	deadline := time.Now().Add(gpuProbeTimeout + 5*time.Second)
	for time.Now().Before(deadline) {
		if g := c.GPULine(); !strings.Contains(g, "checking") {
			return g
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the GPU probe never reported")
	return ""
}

func TestGPUStatusShowsTheReasonOrTheDevice(t *testing.T) {
	noGPU := func(context.Context) (string, error) {
		return "", &gpuworker.UnavailableError{Reason: "no CUDA-capable GPU found (cuInit: NoDevice)"}
	}
	if g := studioGPU(t, noGPU); !strings.Contains(g, "GPU backend unavailable: no CUDA-capable GPU found") || !strings.Contains(g, "CPU backend") {
		t.Errorf("status line %q", g)
	}
	h200 := func(context.Context) (string, error) { return "NVIDIA H200 (compute 9.0)", nil }
	if g := studioGPU(t, h200); !strings.Contains(g, "NVIDIA H200") {
		t.Errorf("status line %q", g)
	}
	if g := New(Config{}).GPULine(); g != "" {
		t.Errorf("no probe made, yet the status line says %q", g)
	}
}

// The real probe on this machine: whatever the machine has, the studio gets
// a line, never a crash or a hang. Without a worker binary or a GPU it is the
// reason.
func TestProbeGPUWorkerOnThisMachine(t *testing.T) {
	g := studioGPU(t, ProbeGPUWorker)
	if g == "" || strings.Contains(g, "checking") {
		t.Fatalf("status line %q", g)
	}
	var unavailable *gpuworker.UnavailableError
	_, err := ProbeGPUWorker(context.Background())
	if _, statErr := os.Stat("/dev/nvidiactl"); statErr != nil && !errors.As(err, &unavailable) {
		t.Errorf("no NVIDIA device node here, yet the probe said %v", err)
	}
	t.Logf("GPU status line: %s", g)
}
