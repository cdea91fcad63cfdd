//go:build cuda

package device

/*
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

// cuLaunchKernelEx and its types are CUDA 12 (Debian's headers are 11.8);
// the layouts below are the CUDA 12 ABI, the function comes from the driver.
typedef struct {
	unsigned int id; // CUlaunchAttributeID
	char pad[4];
	union { char bytes[64]; int programmaticStreamSerializationAllowed; } value;
} pdl_launch_attribute;

typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
	CUstream hStream;
	pdl_launch_attribute *attrs;
	unsigned int numAttrs;
} pdl_launch_config;

typedef CUresult (*pdl_launch_fn)(const pdl_launch_config *, CUfunction, void **, void **);

#define PDL_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION 6

static void *pdl_lookup(void) {
	void *fn = NULL;
	if (cuGetProcAddress("cuLaunchKernelEx", &fn, 12000, 0) != CUDA_SUCCESS) return NULL;
	return fn;
}

// pdl_launch launches f with the programmatic-stream-serialization attribute
// and shared bytes of dynamic shared memory; args holds n 8-byte argument slots.
static CUresult pdl_launch(void *fn, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                           unsigned shared, CUstream s, unsigned long long *args, int n) {
	pdl_launch_attribute attr;
	memset(&attr, 0, sizeof attr);
	attr.id = PDL_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
	attr.value.programmaticStreamSerializationAllowed = 1;
	pdl_launch_config cfg = {gx, gy, gz, bx, 1, 1, shared, s, &attr, 1};
	void *params[32];
	for (int i = 0; i < n && i < 32; i++) params[i] = &args[i];
	return ((pdl_launch_fn)fn)(&cfg, f, params, NULL);
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// pdlLauncher is the driver's cuLaunchKernelEx, or nil where the device
// (before sm_90) or the driver cannot do programmatic dependent launch.
type pdlLauncher struct{ fn unsafe.Pointer }

func lookupPDL(major int) *pdlLauncher {
	if major < 9 {
		return nil
	}
	fn := C.pdl_lookup()
	if fn == nil {
		return nil
	}
	return &pdlLauncher{fn: fn}
}

func cuFunction(f cu.Function) C.CUfunction {
	return *(*C.CUfunction)(unsafe.Pointer(&f))
}

func (p *pdlLauncher) launch(f cu.Function, grid [3]int, block, shared int, s cu.Stream, args []uint64) error {
	if len(args) > 32 {
		return fmt.Errorf("cuda: %d kernel arguments", len(args))
	}
	var slots [32]C.ulonglong
	for i, a := range args {
		slots[i] = C.ulonglong(a)
	}
	r := C.pdl_launch(p.fn, cuFunction(f), C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]), C.uint(block),
		C.uint(shared), cuStream(s), &slots[0], C.int(len(args)))
	return check("cuLaunchKernelEx", r)
}
