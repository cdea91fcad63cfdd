package open

import (
	"context"

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
// in dir (weights, states, scratch at the default context and the default
// voice prefix cache: cuda.ModelBytes) before loading it.
func GPUModelBytes(dir string) (int64, error) { return cuda.ModelBytes(dir, 0) }

// GPUVoiceCacheBytes is the part of GPUModelBytes kept for cached voices
// (the default voice prefix cache, cuda.DefaultPrefixCacheBytes).
const GPUVoiceCacheBytes = cuda.DefaultPrefixCacheBytes
