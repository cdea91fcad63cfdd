//go:build cuda

package cuda

import (
	"proscenium/engine/cuda/device"
	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
)

// Device is an opened GPU (package device: context, stream, pool, graphs,
// timing) running the model's kernels: its Run, Time and ProfileRange hand
// f the model's Queue.
type Device struct {
	*device.Device
	// Numerics is how the backbone computes (docs/MODEL.md "Numerics
	// policy"; the zero value is fast): it picks the kernel instances
	// (policyOf, Queue.backboneGemv) at each launch, so set it before a
	// model's graphs are captured (a captured step keeps the instances it
	// was captured with).
	Numerics drama3.Numerics
	// HostReserve is the host memory a load that keeps experts in host
	// memory leaves available to the rest of the machine (0:
	// DefaultHostReserve; PlanTier).
	HostReserve int64
	// split is the split-K workspace lent to the dense GEMMs
	// (gemm_splitk_cuda.go).
	split gemmSplitWork
	// xparts is the scratch lent to the dense GEMMs' X parts
	// (gemm_xparts_cuda.go).
	xparts gemmXPartsWork
}

// Queue enqueues the model's work on the device's stream: package kernel's
// typed launches (a Queue is their kernel.Launcher) and this package's
// launch helpers, on the device thread.
type Queue struct {
	*device.Queue
	d *Device
}

// DeviceInfo describes the opened GPU and the kernels chosen for it.
type DeviceInfo = device.DeviceInfo

// Graph is a captured sequence of launches (device.Graph).
type Graph = device.Graph

// Open opens GPU ordinal with pool caps deviceCap and pinnedCap (0: none)
// and looks up every kernel the bindings know (kernel.EntryPoints), so a
// kernel build that lacks one fails here.
func Open(ordinal int, deviceCap, pinnedCap int64) (*Device, error) {
	d, err := device.Open(ordinal, deviceCap, pinnedCap)
	if err != nil {
		return nil, err
	}
	if err := d.Require(kernel.EntryPoints); err != nil {
		d.Close()
		return nil, err
	}
	return &Device{Device: d}, nil
}

// Run calls f with the queue on the device thread.
func (d *Device) Run(f func(q *Queue) error) error {
	return d.Device.Run(func(q *device.Queue) error { return f(&Queue{q, d}) })
}

// Time returns the device time in milliseconds of the work enqueue puts on
// the stream (device.Device.Time).
func (d *Device) Time(enqueue func(q *Queue) error) (float64, error) {
	return d.Device.Time(func(q *device.Queue) error { return enqueue(&Queue{q, d}) })
}

// ProfileRange brackets f with the profiler's start and stop
// (device.Device.ProfileRange).
func (d *Device) ProfileRange(f func(q *Queue) error) error {
	return d.Device.ProfileRange(func(q *device.Queue) error { return f(&Queue{q, d}) })
}

// Capture records what enqueue puts on the stream as a graph
// (device.Queue.Capture).
func (q *Queue) Capture(enqueue func(q *Queue) error) (*Graph, error) {
	return q.Queue.Capture(func(dq *device.Queue) error { return enqueue(&Queue{dq, q.d}) })
}

// Upload copies src into the block at byte offset off (device.Upload).
func Upload[T any](d *Device, b *Block, off int64, src []T) error {
	return device.Upload(d.Device, b, off, src)
}

// Download copies len(dst) elements from the block at byte offset off
// (device.Download).
func Download[T any](d *Device, dst []T, b *Block, off int64) error {
	return device.Download(d.Device, dst, b, off)
}
