// Package device is the CUDA device layer on gorgonia.org/cu: one GPU's
// context and stream owned by a goroutine locked to its OS thread (Device.Do,
// Device.Run), the allocation-capped pool of device and pinned host memory
// (Pool, Block; its accounting untagged and tested with a fake driver), the
// kernel modules embedded by package kernels in the variant the device runs
// (ChooseVariant), kernel launches by name through a Queue (with
// programmatic dependent launch on sm_90, so each launch overlaps the tail
// of the one before), captured graphs, event timing and profiler ranges.
// It knows no model: engine/cuda/kernel's typed launches and engine/cuda's
// model run on it.
package device
