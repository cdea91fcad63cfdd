// Package cuda is the GPU backend on gorgonia.org/cu: the context and stream
// owned by one goroutine locked to its OS thread, the allocation-capped pool
// of device and pinned host memory, the kernel modules embedded by package
// kernels and their launches (through a Queue on the device thread; with
// programmatic dependent launch on sm_90, so each kernel's launch overlaps the
// tail of the one before; captured into CUDA graphs for replay), and on them
// the model: a checkpoint's tensors laid out in one device arena and streamed
// into it (weight_layout.go, weights_cuda.go), the mixers (mixers.go) and the
// backbone (backbone_cuda.go: the layer loop, prefill in 64-row passes, one
// replayed graph per decode step; its memory planned and admitted before
// anything is allocated, backbone_plan.go), and the memory tier (tier.go:
// when the model does not fit the device budget, the routed experts of the
// last layers in pinned host memory, read over the bus).
//
// Everything that calls the driver is built only with the cuda tag, and runs
// only inside the GPU worker process (cmd/proscenium-gpu): gorgonia.org/cu
// exits the process in its package init when no GPU is present, so nothing
// the app or the command line import may depend on it. The files without the
// tag (the pool's accounting, the choice of kernel variant) hold no driver
// calls and are tested in CI with a fake driver.
package cuda
