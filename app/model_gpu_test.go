package app

import (
	"os"
	"strings"
	"testing"

	"proscenium/app/model"
	"proscenium/engine/api"
	"proscenium/engine/drama3"
	"proscenium/engine/open"
)

// The model summary gives the GPU layout's bytes before a load, and says
// the memory tier the settings' memory cap leaves the GPU backend.
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
	voices := open.GPUVoiceCache(open.Options{}) // the default
	if sum.GPUBytes < sum.StoredBytes+voices || !strings.HasPrefix(sum.GPUNote, "GPU layout: ") || !strings.Contains(sum.GPUNote, "512.0 MiB of it for cached voices, more where the device has room (automatic); and the codec)") || strings.Contains(sum.GPUNote, "cap") {
		t.Fatalf("GPU bytes %d (stored %d), note %q", sum.GPUBytes, sum.StoredBytes, sum.GPUNote)
	}
	if !strings.Contains(sum.GPUNote, "for 4 takes together") {
		t.Fatalf("note %q: the default batch of 4 unsaid", sum.GPUNote)
	}
	s := svc.Settings()
	s.Batch = 1
	svc.SetSettings(s)
	if one, _ := svc.InspectModel(dir); one.GPUBytes >= sum.GPUBytes || !strings.Contains(one.GPUNote, "for one take at a time") {
		t.Fatalf("batch 1: %d bytes (batch 4: %d), note %q", one.GPUBytes, sum.GPUBytes, one.GPUNote)
	}
	s.Batch = 0 // the caps below are the default batch's (sum's)
	s.MemoryCapBytes = 1 << 20
	svc.SetSettings(s)
	if sum, _ := svc.InspectModel(dir); !strings.Contains(sum.GPUNote, "under the memory cap of 1.0 MiB: a GPU load is refused (the model does not fit: the model needs") {
		t.Fatalf("note with a 1 MiB cap: %q", sum.GPUNote)
	}
	// A cap a byte short of the model with its full voice cache: the model
	// still fits, with a voice cache a byte smaller.
	s.MemoryCapBytes = sum.GPUBytes - 1
	svc.SetSettings(s)
	if sum, _ := svc.InspectModel(dir); !strings.Contains(sum.GPUNote, ": fits on the device: ") {
		t.Fatalf("note with a cap a byte short of the voice cache: %q", sum.GPUNote)
	}
	// A cap a byte short of the weights alone: the experts of the last
	// layers in host memory (and no voice cache: experts come first).
	s.MemoryCapBytes = sum.GPUBytes - voices - 1
	svc.SetSettings(s)
	if sum, _ := svc.InspectModel(dir); !strings.Contains(sum.GPUNote, ": experts in host memory: ") || !strings.Contains(sum.GPUNote, "in host memory (pinned)") {
		t.Fatalf("note with a cap a byte short: %q", sum.GPUNote)
	}
	// The settings' voice cache: the layout holds what it asks for.
	s.MemoryCapBytes, s.VoiceCacheBytes = 0, 2<<30
	svc.SetSettings(s)
	if two, _ := svc.InspectModel(dir); two.GPUBytes != sum.GPUBytes-voices+2<<30 || !strings.Contains(two.GPUNote, "(2.0 GiB of it for cached voices") {
		t.Fatalf("a 2 GiB voice cache: %d bytes (512 MiB: %d), note %q", two.GPUBytes, sum.GPUBytes, two.GPUNote)
	}
}

// The settings' cap admits a model larger than it that the GPU can run with
// routed experts in host memory, and refuses, before opening, one whose
// dense part passes it, with the GPU's numbers.
func TestMemoryCapAdmitsTheHostTier(t *testing.T) {
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
	// The demo geometry with wide experts, so that they outweigh what the
	// GPU keeps on the device besides them (tower, codec allowance, stage, and
	// a 512-row prefill pass's scratch, which grows with the expert width and,
	// since the tensor-core prompt attention's parts, with the context: 48
	// experts, not 32, keep the margin).
	cfg := drama3.TinyConfig()
	cfg.Text.NumExperts, cfg.Text.MoEIntermediate = 48, 6144
	dir := t.TempDir()
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 1, BaseTokenizer: base, Config: cfg, FusedExperts: true}); err != nil {
		t.Fatal(err)
	}
	opened := 0
	svc, err := New(Config{Open: func(string) (api.Engine, error) { opened++; return &testEngine{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	// One take at a time: its state is small beside the wide experts (each
	// take of a batch holds its own at the full context).
	s := svc.Settings()
	s.Batch = 1
	svc.SetSettings(s)
	sum, err := svc.InspectModel(dir)
	if err != nil || sum.MemoryNeeded <= 0 || sum.GPUBytes <= 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	s.MemoryCapBytes = min(sum.MemoryNeeded, sum.GPUBytes) - 1
	svc.SetSettings(s)
	if s.MemoryCapBytes >= sum.MemoryNeeded {
		t.Fatalf("the cap %d does not refuse the estimate %d: the GPU's tier is not what admits it", s.MemoryCapBytes, sum.MemoryNeeded)
	}
	if _, err := svc.LoadModel(dir); err != nil {
		t.Fatalf("a cap the GPU's host tier fits under: %v", err)
	}
	waitFor(t, func() bool { return svc.ModelStatus().State == model.ModelLoaded })
	if opened != 1 {
		t.Fatalf("opened %d times", opened)
	}
	s.MemoryCapBytes = 1 << 20
	svc.SetSettings(s)
	if _, err := svc.LoadModel(dir); err == nil || !strings.Contains(err.Error(), "on the GPU the model does not fit") || opened != 1 {
		t.Fatalf("a 1 MiB cap: %v (opened %d)", err, opened)
	}
}

// A GPU engine's readouts carry its device's total (the bar's whole without
// a cap) and its pinned host memory.
func TestStatsTakeTheDeviceTotal(t *testing.T) {
	eng := &testEngine{mem: api.Memory{Device: "NVIDIA H200", Used: 40 << 30, Peak: 41 << 30, Total: 140 << 30, Pinned: 1 << 20}}
	svc, err := New(Config{Open: func(string) (api.Engine, error) { return eng, nil }})
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
