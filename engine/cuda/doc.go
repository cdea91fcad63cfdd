// Package cuda is the GPU backend on gorgonia.org/cu: the context and stream
// owned by one goroutine locked to its OS thread, the allocation-capped pool
// of device and pinned host memory, the kernel modules embedded by package
// kernels and their launches (through a Queue on the device thread; with
// programmatic dependent launch on sm_90, so each kernel's launch overlaps the
// tail of the one before; captured into CUDA graphs for replay).
//
// Everything that calls the driver is built only with the cuda tag, and runs
// only inside the GPU worker process (cmd/proscenium-gpu): gorgonia.org/cu
// exits the process in its package init when no GPU is present, so nothing
// the app or the command line import may depend on it. The files without the
// tag (the pool's accounting, the choice of kernel variant) hold no driver
// calls and are tested in CI with a fake driver.
package cuda
