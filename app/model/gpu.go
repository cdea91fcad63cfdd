package model

import (
	"context"
	"time"

	"proscenium/engine/open"
)

// GPUProbe reports the GPU backend: a one-line description of the device
// the GPU worker opened, or an error saying why the worker cannot start
// (its message is shown as it is).
type GPUProbe func(ctx context.Context) (string, error)

// ProbeGPUWorker asks engine/open to start the GPU worker process and
// describe its device (open.DescribeGPU). The studio never loads CUDA
// itself: a machine without a GPU or driver gets the worker's reason, not
// a crash.
func ProbeGPUWorker(ctx context.Context) (string, error) { return open.DescribeGPU(ctx) }

// gpuProbeTimeout bounds the probe: a worker that hangs in the driver must
// not leave the status line saying "checking" forever.
const gpuProbeTimeout = 30 * time.Second

// ProbeGPU runs probe off the caller's goroutine and keeps the result as
// the GPU status line (GPULine), calling Config.OnGPU when it is known.
func (c *Control) ProbeGPU(probe GPUProbe) {
	c.mu.Lock()
	c.gpu = "GPU backend: checking…"
	c.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), gpuProbeTimeout)
		defer cancel()
		dev, err := probe(ctx)
		line := "GPU backend: " + dev + " (auto runs takes there)"
		if err != nil {
			line = err.Error() + "; takes run on the CPU backend"
		}
		c.mu.Lock()
		c.gpu = line
		c.mu.Unlock()
		if c.onGPU != nil {
			c.onGPU()
		}
	}()
}

// GPULine is the GPU backend's status line: its device, or why it is
// unavailable ("" when not checked).
func (c *Control) GPULine() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gpu
}
