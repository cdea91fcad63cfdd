//go:build cuda

package device

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// Queue enqueues work on the device's stream. It exists only inside
// Device.Run, on the device thread, so a sequence of launches costs no
// hand-over between goroutines.
type Queue struct{ d *Device }

// Run calls f with the device's queue on the device thread.
func (d *Device) Run(f func(q *Queue) error) error {
	return d.Do(func() error { return f(&Queue{d}) })
}

// Launch enqueues kernel name with a grid and a block of threads; args are
// its parameters, one 8-byte slot each (package kernel's typed launch
// functions fill them).
func (q *Queue) Launch(name string, grid [3]int, block int, args ...uint64) error {
	return q.LaunchShared(name, grid, block, 0, args...)
}

// LaunchShared is Launch with shared bytes of dynamic shared memory a
// block; beyond the 48 KB every kernel may take, the function's limit is
// raised to them first (once a function and size: Device.sharedLimit).
func (q *Queue) LaunchShared(name string, grid [3]int, block, shared int, args ...uint64) error {
	fn, err := q.d.Function(name)
	if err != nil {
		return err
	}
	if err := q.d.sharedLimit(name, fn, shared); err != nil {
		return err
	}
	if q.d.usePDL {
		if err := q.d.pdl.launch(fn, grid, block, shared, q.d.stream, args); err != nil {
			return fmt.Errorf("cuda: launch %s: %w", name, err)
		}
		return nil
	}
	params := make([]unsafe.Pointer, len(args))
	for i := range args {
		params[i] = unsafe.Pointer(&args[i])
	}
	if err := fn.Launch(grid[0], grid[1], grid[2], block, 1, 1, shared, q.d.stream, params); err != nil {
		return fmt.Errorf("cuda: launch %s: %w", name, err)
	}
	return nil
}

// SharedLimit raises kernel name's limit of dynamic shared memory to shared
// bytes now, as LaunchShared would before its launch, so that a caller can
// pick another kernel where the device refuses (before anything is
// enqueued).
func (q *Queue) SharedLimit(name string, shared int) error {
	fn, err := q.d.Function(name)
	if err != nil {
		return err
	}
	return q.d.sharedLimit(name, fn, shared)
}

// Stream is the stream the queue enqueues on (for the driver's async copies
// and memsets, on the device thread).
func (q *Queue) Stream() cu.Stream { return q.d.stream }

// Device is the device the queue belongs to.
func (q *Queue) Device() *Device { return q.d }

// Stream is the device's stream (the one Run's queue enqueues on); use it
// on the device thread only.
func (d *Device) Stream() cu.Stream { return d.stream }
