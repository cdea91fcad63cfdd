package app

import (
	"context"
	"time"

	"proscenium/engine/gpuworker"
)

// GPUProbe reports the GPU backend: a one-line description of the device
// the GPU worker opened, or an error saying why the worker cannot start
// (its message is shown as it is).
type GPUProbe func(ctx context.Context) (string, error)

// ProbeGPUWorker starts the GPU worker process (engine/gpuworker) and
// describes its device. The studio never loads CUDA itself: a machine
// without a GPU or driver gets the worker's reason, not a crash.
func ProbeGPUWorker(ctx context.Context) (string, error) {
	hello, err := gpuworker.Probe(ctx)
	if err != nil {
		return "", err
	}
	return hello.Device.String(), nil
}

// gpuProbeTimeout bounds the probe: a worker that hangs in the driver must
// not leave the status line saying "checking" forever.
const gpuProbeTimeout = 30 * time.Second

// probeGPU runs probe off the caller's goroutine and publishes the result
// in the studio status line.
func (s *Service) probeGPU(probe GPUProbe) {
	s.mu.Lock()
	s.gpu = "GPU backend: checking…"
	s.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), gpuProbeTimeout)
		defer cancel()
		dev, err := probe(ctx)
		line := "GPU backend: " + dev + " (auto runs takes there)"
		if err != nil {
			line = err.Error() + "; takes run on the CPU backend"
		}
		s.mu.Lock()
		s.gpu = line
		s.mu.Unlock()
		s.publish(EventStudio, s.Studio())
	}()
}
