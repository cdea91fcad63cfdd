//go:build cuda

package device

// #cgo LDFLAGS: -lcuda
// #include <cuda.h>
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// CUDADriver is the real Driver. Every method must run on the device thread,
// where the context is current (the pool is only used through Device.Do).
type CUDADriver struct{}

func (CUDADriver) AllocDevice(n int64) (uintptr, error) {
	p, err := cu.MemAlloc(n)
	return uintptr(p), err
}

func (CUDADriver) FreeDevice(p uintptr) error { return cu.MemFree(cu.DevicePtr(p)) }

// AllocPinned takes page-locked host memory (gorgonia.org/cu has no binding
// for cuMemHostAlloc).
func (CUDADriver) AllocPinned(n int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if r := C.cuMemHostAlloc(&p, C.size_t(n), 0); r != C.CUDA_SUCCESS {
		return nil, fmt.Errorf("cuMemHostAlloc: CUresult %d", int(r))
	}
	return p, nil
}

func (CUDADriver) FreePinned(p unsafe.Pointer) error { return cu.MemFreeHost(p) }

func (CUDADriver) MemInfo() (int64, int64, error) { return cu.MemInfo() }

// HostDevicePointer is the address kernels read pinned host memory at
// (with unified addressing, the host pointer itself). On the device thread.
func HostDevicePointer(p unsafe.Pointer) (uintptr, error) {
	var d C.CUdeviceptr
	if r := C.cuMemHostGetDevicePointer(&d, p, 0); r != C.CUDA_SUCCESS {
		return 0, fmt.Errorf("cuMemHostGetDevicePointer: CUresult %d", int(r))
	}
	return uintptr(d), nil
}
