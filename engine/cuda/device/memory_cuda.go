//go:build cuda

package device

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// Alloc takes bytes of device memory from the pool, on the device thread.
func (d *Device) Alloc(bytes int64) (*Block, error) {
	var b *Block
	err := d.Do(func() (err error) { b, err = d.Pool.Alloc(DeviceMem, bytes); return })
	return b, err
}

// AllocPinned takes bytes of page-locked host memory from the pool.
func (d *Device) AllocPinned(bytes int64) (*Block, error) {
	var b *Block
	err := d.Do(func() (err error) { b, err = d.Pool.Alloc(PinnedMem, bytes); return })
	return b, err
}

// Free returns a block to the driver, on the device thread.
func (d *Device) Free(b *Block) error { return d.Do(b.Free) }

// Upload copies src into the block at byte offset off, after the work
// already enqueued on the stream, and returns once the bytes are there.
func Upload[T any](d *Device, b *Block, off int64, src []T) error {
	if len(src) == 0 {
		return nil
	}
	n := int64(len(src)) * int64(unsafe.Sizeof(src[0]))
	if err := CheckFits(b, off, n, "upload"); err != nil {
		return err
	}
	// The copy runs on the legacy stream, which is not ordered with the
	// non-blocking stream kernels and fills run on: the stream is drained
	// first, so work enqueued before Upload (a Fill32 of the same block, a
	// pass still reading it) cannot land after the copy (a session 9 device
	// run saw a test's NaN fill overwrite its uploaded inputs while other
	// processes held the GPU). A copy from pageable memory may return before
	// its DMA has landed: the context synchronisation makes the bytes
	// visible to every stream before Upload returns.
	return d.Do(func() error {
		if err := d.stream.Synchronize(); err != nil {
			return err
		}
		if err := cu.MemcpyHtoD(cu.DevicePtr(b.Ptr+uintptr(off)), unsafe.Pointer(&src[0]), n); err != nil {
			return err
		}
		return cu.Synchronize()
	})
}

// Download copies len(dst) elements from the block at byte offset off.
func Download[T any](d *Device, dst []T, b *Block, off int64) error {
	if len(dst) == 0 {
		return nil
	}
	n := int64(len(dst)) * int64(unsafe.Sizeof(dst[0]))
	if err := CheckFits(b, off, n, "download"); err != nil {
		return err
	}
	return d.Do(func() error {
		if err := d.stream.Synchronize(); err != nil {
			return err
		}
		return cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), cu.DevicePtr(b.Ptr+uintptr(off)), n)
	})
}

// Fill32 sets every 4-byte word of the block to v (e.g. a NaN pattern to
// poison outputs before a test).
func (d *Device) Fill32(b *Block, v uint32) error {
	if err := CheckFits(b, 0, b.Bytes&^3, "fill"); err != nil {
		return err
	}
	return d.Do(func() error { return cu.MemsetD32Async(cu.DevicePtr(b.Ptr), uint(v), b.Bytes/4, d.stream) })
}

// Copy enqueues a device-to-device copy of n bytes on the stream.
func (q *Queue) Copy(dst, src *Block, n int64) error {
	if err := CheckFits(dst, 0, n, "copy destination"); err != nil {
		return err
	}
	if err := CheckFits(src, 0, n, "copy source"); err != nil {
		return err
	}
	return cu.MemcpyDtoDAsync(cu.DevicePtr(dst.Ptr), cu.DevicePtr(src.Ptr), n, q.d.stream)
}

// CopyFromHost enqueues a copy of n bytes from the pinned block src into
// the device block dst on the stream (ordered with the kernels around it).
func (q *Queue) CopyFromHost(dst, src *Block, n int64) error {
	if err := CheckFits(dst, 0, n, "copy from host"); err != nil {
		return err
	}
	if src == nil || src.Host == nil || n < 0 || n > src.Bytes {
		return fmt.Errorf("cuda: copy from host: %d bytes from a block that is not pinned host memory of that size", n)
	}
	return cu.MemcpyHtoDAsync(cu.DevicePtr(dst.Ptr), src.Host, n, q.d.stream)
}

// MemInfo is the device's free and total memory now.
func (d *Device) MemInfo() (free, total int64, err error) {
	err = d.Do(func() (err error) { free, total, err = cu.MemInfo(); return })
	return
}

// CopyFromHostRange enqueues a copy of n bytes at offset off of the pinned
// block src to the same offset of the device block dst on the stream.
func (q *Queue) CopyFromHostRange(dst, src *Block, off, n int64) error {
	if err := CheckFits(dst, off, n, "copy from host"); err != nil {
		return err
	}
	if src == nil || src.Host == nil || off < 0 || n < 0 || off+n > src.Bytes {
		return fmt.Errorf("cuda: copy from host: bytes [%d, %d) of a block that is not pinned host memory of that size", off, off+n)
	}
	return cu.MemcpyHtoDAsync(cu.DevicePtr(dst.Ptr+uintptr(off)), unsafe.Add(src.Host, off), n, q.d.stream)
}
