// Package kernels embeds the compiled CUDA kernels: one fatbin per source file
// of this directory, built by `make kernels` (kernels/cuda.mk) with the newest
// nvcc on the machine. The generic fatbin of a source holds SASS for sm_80,
// sm_86, sm_89 and sm_90 plus compute_90 PTX; an sm_90a fatbin exists only
// where that nvcc supports sm_90a. It holds no Go logic beyond lookup: engine/cuda
// chooses the variant for a device and loads it.
//
// Without the cuda tag the package is empty; with it, it needs `make kernels`
// first (the fatbins are build outputs, not committed).
package kernels
