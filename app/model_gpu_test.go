package app

import (
	"os"
	"strings"
	"testing"

	"proscenium/app/model"
	"proscenium/engine"
	"proscenium/engine/drama3"
	"proscenium/engine/open"
)

// The model summary gives the GPU layout's bytes before a load, and says
// whether they pass the settings' memory cap.
func TestInspectModelGivesTheGPUBytes(t *testing.T) {
	path, err := drama3.FindBaseTokenizer()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	base, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 1, BaseTokenizer: base}); err != nil {
		t.Fatal(err)
	}
	svc, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := svc.InspectModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	if sum.GPUBytes < sum.StoredBytes+open.GPUVoiceCacheBytes || !strings.HasPrefix(sum.GPUNote, "GPU layout: ") || !strings.Contains(sum.GPUNote, "512.0 MiB of it for cached voices") || strings.Contains(sum.GPUNote, "cap") {
		t.Fatalf("GPU bytes %d (stored %d), note %q", sum.GPUBytes, sum.StoredBytes, sum.GPUNote)
	}
	s := svc.Settings()
	s.MemoryCapBytes = 1 << 20
	svc.SetSettings(s)
	if sum, _ = svc.InspectModel(dir); !strings.Contains(sum.GPUNote, "more than the memory cap of 1.0 MiB") {
		t.Fatalf("note with a 1 MiB cap: %q", sum.GPUNote)
	}
}

// A GPU engine's readouts carry its device's total (the bar's whole without
// a cap) and its pinned host memory.
func TestStatsTakeTheDeviceTotal(t *testing.T) {
	eng := &testEngine{mem: engine.Memory{Device: "NVIDIA H200", Used: 40 << 30, Peak: 41 << 30, Total: 140 << 30, Pinned: 1 << 20}}
	svc, err := New(Config{Open: func(string) (engine.Engine, error) { return eng, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return svc.ModelStatus().State == model.ModelLoaded })
	v := svc.Stats()
	if v.Total != 140<<30 || v.Memory == nil || v.Memory.Pinned != 1<<20 {
		t.Fatalf("stats %+v (memory %+v)", v, v.Memory)
	}
}
