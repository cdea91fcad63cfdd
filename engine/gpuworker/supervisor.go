package gpuworker

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Names of the worker binary and of the variable that overrides where it is.
const (
	WorkerName = "proscenium-gpu"
	EnvWorker  = "PROSCENIUM_GPU_WORKER"
)

// Locate finds the worker: $PROSCENIUM_GPU_WORKER, else next to the running
// executable, else in PATH.
func Locate() (string, error) {
	if p := os.Getenv(EnvWorker); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", &UnavailableError{Reason: fmt.Sprintf("GPU worker not found at $%s=%s", EnvWorker, p), Detail: err.Error()}
		}
		return p, nil
	}
	var looked []string
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), WorkerName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		looked = append(looked, filepath.Dir(exe)+" (next to this program)")
	}
	if p, err := exec.LookPath(WorkerName); err == nil {
		return p, nil
	}
	looked = append(looked, "$PATH")
	return "", &UnavailableError{Reason: fmt.Sprintf(
		"GPU worker %s not found (looked in $%s, %s); build it with `make gpu-worker` where the CUDA headers are installed",
		WorkerName, EnvWorker, strings.Join(looked, ", "))}
}

// Supervisor keeps one worker: Client starts it on first use and again after
// it died, so a crash ends only the take in flight and the next load gets a
// fresh worker.
type Supervisor struct {
	Path string // worker binary; "" means Locate
	Opt  Options

	mu sync.Mutex
	c  *Client
}

// Client returns the running worker, starting one if there is none or the
// last one died.
func (s *Supervisor) Client(ctx context.Context) (*Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil && s.c.Err() == nil {
		select {
		case <-s.c.Done():
		default:
			return s.c, nil
		}
	}
	s.c = nil
	path := s.Path
	if path == "" {
		p, err := Locate()
		if err != nil {
			return nil, err
		}
		path = p
	}
	c, err := Start(ctx, path, s.Opt)
	if err != nil {
		return nil, err
	}
	s.c = c
	return c, nil
}

// Close stops the worker, if one runs.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	c := s.c
	s.c = nil
	s.mu.Unlock()
	if c != nil {
		return c.Close()
	}
	return nil
}

// Probe locates and starts the worker, takes its hello and stops it: what the
// studio shows about the GPU backend. The error is an *UnavailableError
// saying why (no worker binary, no GPU, no driver) when it cannot start.
func Probe(ctx context.Context) (Hello, error) {
	path, err := Locate()
	if err != nil {
		return Hello{}, err
	}
	return ProbePath(ctx, path)
}

// ProbePath is Probe of the worker at path.
func ProbePath(ctx context.Context, path string) (Hello, error) {
	c, err := Start(ctx, path, Options{})
	if err != nil {
		return Hello{}, err
	}
	defer c.Close()
	return c.Hello(), nil
}
