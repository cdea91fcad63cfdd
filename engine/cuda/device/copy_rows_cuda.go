//go:build cuda

package device

// #include <cuda.h>
import "C"

import "fmt"

// CopyRows enqueues a device-to-device copy of rows rows of width bytes
// each, the source's rows srcPitch bytes apart and the destination's
// dstPitch (a column block of a row-major matrix, say). It calls the
// driver: gorgonia.org/cu's Memcpy2DAsync dereferences the CUDA arrays of
// its parameters, nil for a copy between plain device pointers.
func (q *Queue) CopyRows(dst, src *Block, rows int, width, dstPitch, srcPitch int64) error {
	if rows <= 0 || width <= 0 || width > dstPitch || width > srcPitch {
		return fmt.Errorf("cuda: copy of %d rows of %d bytes, pitches %d and %d", rows, width, dstPitch, srcPitch)
	}
	last := int64(rows - 1)
	if err := CheckFits(dst, 0, last*dstPitch+width, "copy destination"); err != nil {
		return err
	}
	if err := CheckFits(src, 0, last*srcPitch+width, "copy source"); err != nil {
		return err
	}
	p := C.CUDA_MEMCPY2D{
		srcMemoryType: C.CU_MEMORYTYPE_DEVICE, srcDevice: C.CUdeviceptr(src.Ptr), srcPitch: C.size_t(srcPitch),
		dstMemoryType: C.CU_MEMORYTYPE_DEVICE, dstDevice: C.CUdeviceptr(dst.Ptr), dstPitch: C.size_t(dstPitch),
		WidthInBytes: C.size_t(width), Height: C.size_t(rows),
	}
	return check("2D copy", C.cuMemcpy2DAsync(&p, cuStream(q.d.stream)))
}
