// Package cuda is Drama 3 on the GPU: a checkpoint's tensors laid out in one
// device arena and streamed into it (weight_layout.go, weights_cuda.go), the
// mixers (mixers.go), the backbone (backbone_cuda.go: the layer loop, prefill
// in 64-row passes, one replayed graph per decode step; its memory planned
// and admitted before anything is allocated, backbone_plan.go), the fast
// audio tower and the device sampler (tower_cuda.go, sampler_cuda.go, the
// frame control block), the codec decoder and encoder (codec_*.go) and the
// frame backend the take loop drives (frame_backend_cuda.go), and the memory
// tier (tier.go: when the model does not fit the device budget, the routed
// experts of the last layers in pinned host memory, read over the bus).
//
// It stands on two packages below it: engine/cuda/device, the device layer
// (the context and stream owned by one goroutine locked to its OS thread,
// the allocation-capped pool, the embedded kernel modules, launches with
// programmatic dependent launch, graphs, timing), and engine/cuda/kernel,
// the typed launch functions generated from kernels/*.cu (tools/kernelgen).
// Device and Queue here are the device layer's, handing the model's Queue to
// the work they run. What the two backends share (the codec plan, the
// encoding, the RoPE tables) is engine/drama3's: this package does not
// import engine/cpu (tools/layers checks it).
//
// Everything that calls the driver is built only with the cuda tag, and runs
// only inside the GPU worker process (cmd/proscenium-gpu): gorgonia.org/cu
// exits the process in its package init when no GPU is present, so nothing
// the app or the command line import may depend on it. The files without the
// tag (layouts, plans, the choice of kernel instance) hold no driver calls
// and are tested in CI.
package cuda
