package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"proscenium/engine/gpuworker"
)

func TestGPUProbeReportsWhyTheBackendIsUnavailable(t *testing.T) {
	if err := commands["gpu"].run(nil); !errors.Is(err, errUsage) {
		t.Fatalf("no subcommand: %v", err)
	}
	dir := t.TempDir()
	cases := []struct {
		name, script, want string
	}{
		{"missing worker", "", "not found"},
		// What gorgonia.org/cu prints in its init on a machine without a GPU.
		{"no device", `echo 'Error in initialization, please refer to "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__INITIALIZE.html" for details on: NoDevice'; exit 1`,
			"no CUDA-capable GPU found"},
		{"no driver", `echo 'proscenium-gpu: error while loading shared libraries: libcuda.so.1: cannot open shared object file' >&2; exit 127`,
			"libcuda.so.1 is not installed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			worker := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if c.script != "" {
				if runtime.GOOS == "windows" {
					t.Skip("shell-script worker")
				}
				if err := os.WriteFile(worker, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			err := runGPUProbe([]string{"-worker", worker}, &out)
			var ue *gpuworker.UnavailableError
			if !errors.As(err, &ue) || !strings.Contains(ue.Reason, c.want) {
				t.Fatalf("error %v, want an UnavailableError saying %q", err, c.want)
			}
			// --json prints the report on failure too, and still fails.
			out.Reset()
			err = runGPUProbe([]string{"-worker", worker, "--json"}, &out)
			var rep probeReport
			if jerr := json.Unmarshal(out.Bytes(), &rep); err == nil || jerr != nil || rep.Available || !strings.Contains(rep.Error, c.want) {
				t.Fatalf("--json: error %v, output %q (%v), want a JSON report saying %q", err, out.String(), jerr, c.want)
			}
		})
	}
}

// recordingWorker writes a stand-in worker, a shell script that records the
// arguments it is started with (the test is skipped on Windows); args
// returns the last run's, trimmed.
func recordingWorker(t *testing.T) (worker string, args func() string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell-script worker")
	}
	dir := t.TempDir()
	worker, seen := filepath.Join(dir, "worker"), filepath.Join(dir, "args")
	if err := os.WriteFile(worker, []byte("#!/bin/sh\necho \"$@\" > "+seen+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return worker, func() string {
		got, err := os.ReadFile(seen)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(got))
	}
}
