package open

import (
	"context"

	"proscenium/engine"
	"proscenium/engine/cuda"
	"proscenium/engine/gpuworker"
)

// This file answers the studio's questions about the GPU backend without
// the studio importing it: which device the worker opens, and how much
// device memory a model needs there.

// DescribeGPU starts the GPU worker process (engine/gpuworker), describes
// the device it opened and stops it. This process never loads CUDA itself:
// a machine without a GPU or driver gets the worker's reason (a
// *gpuworker.UnavailableError), not a crash.
func DescribeGPU(ctx context.Context) (string, error) {
	hello, err := gpuworker.Probe(ctx)
	if err != nil {
		return "", err
	}
	return hello.Device.String(), nil
}

// GPUModelBytes is the device memory the GPU backend admits for the model
// in dir with batch takes together (0: engine.DefaultBatch): the weights
// once, each take's states and scratch at the default context
// (cuda.ModelTakesBytes), before loading it.
func GPUModelBytes(dir string, batch int) (int64, error) {
	n, err := engine.BatchOf(batch)
	if err != nil {
		return 0, err
	}
	return cuda.ModelTakesBytes(dir, 0, n)
}
