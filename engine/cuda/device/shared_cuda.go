//go:build cuda

package device

// #include <cuda.h>
import "C"

import (
	"fmt"

	"gorgonia.org/cu"
)

// staticSharedLimit is the shared memory a block may take without raising
// its function's limit (48 KB on every architecture).
const staticSharedLimit = 48 << 10

// sharedLimit raises fn's limit of dynamic shared memory to shared bytes
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) where it is beyond 48 KB
// and not yet raised that far; gorgonia.org/cu has no binding for
// cuFuncSetAttribute. On the device thread. Launches of 48 KB or less cost
// one comparison.
func (d *Device) sharedLimit(name string, fn cu.Function, shared int) error {
	if shared <= staticSharedLimit || d.shared[name] >= shared {
		return nil
	}
	r := C.cuFuncSetAttribute(cuFunction(fn), C.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, C.int(shared))
	if r != C.CUDA_SUCCESS {
		return fmt.Errorf("cuda: %s: %d bytes of dynamic shared memory: cuFuncSetAttribute: CUresult %d", name, shared, int(r))
	}
	// The whole of the SM's L1/shared memory as shared memory (a hint; the
	// driver otherwise sizes the carveout itself), so that as many blocks
	// as the kernel's size allows share an SM (gemm32's rings: two or three
	// of 112 or 74 KB in 228 KB).
	r = C.cuFuncSetAttribute(cuFunction(fn), C.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, C.CU_SHAREDMEM_CARVEOUT_MAX_SHARED)
	if r != C.CUDA_SUCCESS {
		return fmt.Errorf("cuda: %s: shared memory carveout: cuFuncSetAttribute: CUresult %d", name, int(r))
	}
	if d.shared == nil {
		d.shared = map[string]int{}
	}
	d.shared[name] = shared
	return nil
}
