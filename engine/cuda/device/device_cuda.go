//go:build cuda

package device

import (
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"

	"gorgonia.org/cu"

	"proscenium/kernels"
)

// DeviceInfo describes the opened GPU and the kernels chosen for it.
type DeviceInfo struct {
	Name          string `json:"name"`
	Ordinal       int    `json:"ordinal"`
	Major         int    `json:"cc_major"`
	Minor         int    `json:"cc_minor"`
	Multiprocs    int    `json:"multiprocessors"`
	L2Bytes       int    `json:"l2_bytes"`
	TotalMem      int64  `json:"total_mem_bytes"`
	DriverVersion int    `json:"driver_version"` // e.g. 13000 for CUDA 13.0
	Kernels       string `json:"kernels"`        // the variant loaded (Variant.Code)
	PDL           bool   `json:"pdl"`            // programmatic dependent launch available
	KernelBuild   string `json:"kernel_build"`   // nvcc and variants, from `make kernels`
	Sync          string `json:"sync"`           // how the host waits (PROSCENIUM_GPU_SYNC)
	// StreamPriority is the main stream's (0: the default, the least; the
	// GPU's greatest is negative): PROSCENIUM_GPU_STREAM_PRIORITY.
	StreamPriority int `json:"stream_priority"`
}

// Device owns one GPU's context and stream. All driver calls run on a single
// goroutine locked to its OS thread (the context is current there and
// nowhere else); other goroutines hand it work through Do.
type Device struct {
	Info DeviceInfo
	Pool *Pool

	work   chan func()
	done   chan struct{}
	ctx    cu.CUContext
	stream cu.Stream
	mods   []cu.Module            // one per kernels/*.cu file
	fns    map[string]cu.Function // looked up on first launch
	shared map[string]int         // dynamic shared memory limits raised (sharedLimit)
	pdl    *pdlLauncher           // nil: plain launches
	usePDL bool
}

// Open creates a context and a stream on GPU ordinal, loads the kernels for
// its architecture and makes a pool with the given caps (0: none).
func Open(ordinal int, deviceCap, pinnedCap int64) (*Device, error) {
	d := &Device{work: make(chan func()), done: make(chan struct{}), fns: map[string]cu.Function{}}
	started := make(chan error)
	go d.run(ordinal, started)
	if err := <-started; err != nil {
		return nil, err
	}
	d.Pool = NewPool(CUDADriver{}, deviceCap, pinnedCap)
	return d, nil
}

func (d *Device) run(ordinal int, started chan<- error) {
	runtime.LockOSThread()
	defer close(d.done)
	if err := d.setUp(ordinal); err != nil {
		d.tearDown()
		started <- err
		return
	}
	started <- nil
	for f := range d.work {
		f()
	}
	d.tearDown()
}

func (d *Device) setUp(ordinal int) error {
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	inf := DeviceInfo{Ordinal: ordinal, DriverVersion: cu.Version(), KernelBuild: kernels.BuildInfo()}
	if inf.Name, err = dev.Name(); err != nil {
		return fmt.Errorf("cuda: device %d name: %w", ordinal, err)
	}
	attrs, err := dev.Attributes(cu.ComputeCapabilityMajor, cu.ComputeCapabilityMinor, cu.MultiprocessorCount, cu.L2CacheSize)
	if err != nil {
		return fmt.Errorf("cuda: device %d attributes: %w", ordinal, err)
	}
	inf.Major, inf.Minor, inf.Multiprocs, inf.L2Bytes = attrs[0], attrs[1], attrs[2], attrs[3]
	if inf.TotalMem, err = dev.TotalMem(); err != nil {
		return fmt.Errorf("cuda: device %d memory: %w", ordinal, err)
	}
	modules := kernels.Modules()
	if len(modules) == 0 {
		return fmt.Errorf("cuda: no compiled kernels embedded (run make kernels)")
	}
	haveSM90a := true
	for _, m := range modules {
		haveSM90a = haveSM90a && kernels.SM90a(m) != nil
	}
	v, err := ChooseVariant(inf.Major, inf.Minor, haveSM90a)
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", inf.Name, err)
	}
	inf.Kernels = v.Code
	mode, err := ParseSyncMode(os.Getenv(SyncEnv))
	if err != nil {
		return err
	}
	sched := map[SyncMode]cu.ContextFlags{SyncBlocking: cu.SchedBlockingSync, SyncSpin: cu.SchedSpin, SyncYield: cu.SchedYield}[mode]
	if d.ctx, err = dev.MakeContext(sched); err != nil {
		return fmt.Errorf("cuda: context on %s: %w", inf.Name, err)
	}
	inf.Sync = mode.String()
	priority := 0
	if streamPriorityFromEnv() {
		if _, greatest, err := cu.StreamPriorityRange(); err == nil {
			priority = greatest
		}
	}
	if d.stream, err = cu.MakeStreamWithPriority(priority, cu.NonBlocking); err != nil {
		return fmt.Errorf("cuda: stream: %w", err)
	}
	inf.StreamPriority = priority
	for _, m := range modules {
		image := kernels.Generic(m)
		if v.SM90a {
			image = kernels.SM90a(m)
		}
		mod, err := cu.LoadData(string(image))
		if err != nil {
			return fmt.Errorf("cuda: load kernels %s (%s) on %s (compute %d.%d): %w", m, v.Code, inf.Name, inf.Major, inf.Minor, err)
		}
		d.mods = append(d.mods, mod)
	}
	d.pdl = lookupPDL(inf.Major)
	d.usePDL = d.pdl != nil
	inf.PDL = d.usePDL
	d.Info = inf
	return nil
}

func (d *Device) tearDown() {
	for _, m := range d.mods {
		m.Unload()
	}
	if d.stream != (cu.Stream{}) {
		d.stream.Destroy()
	}
	if d.ctx != (cu.CUContext{}) {
		d.ctx.Destroy()
	}
}

// Function finds kernel name in the loaded modules (on the device thread),
// remembering it for the next launch.
func (d *Device) Function(name string) (cu.Function, error) {
	if fn, ok := d.fns[name]; ok {
		return fn, nil
	}
	for _, m := range d.mods {
		if fn, err := m.Function(name); err == nil {
			d.fns[name] = fn
			return fn, nil
		}
	}
	return cu.Function{}, fmt.Errorf("cuda: no kernel %q in the loaded modules (kernels/*.cu)", name)
}

// Do runs f on the device thread and returns its error.
func (d *Device) Do(f func() error) error {
	res := make(chan error, 1)
	d.work <- func() { res <- f() }
	return <-res
}

// Close ends the device thread, destroying the module, stream and context.
// Blocks of the pool must be freed first.
func (d *Device) Close() {
	close(d.work)
	<-d.done
}

// SetPDL turns programmatic dependent launch on or off (where available);
// it is on by default on sm_90 and later. It must not be called inside Run.
func (d *Device) SetPDL(on bool) {
	d.Do(func() error { d.usePDL = on && d.pdl != nil; return nil })
}

// Sync waits for the stream's work and returns the first error it met.
func (d *Device) Sync() error {
	return d.Do(func() error { return d.stream.Synchronize() })
}

// Require looks up every entry point of entries (kernel names by module, the
// kernels/*.cu file's base name) now, so a kernel build that lacks one fails
// when the device opens rather than at a take.
func (d *Device) Require(entries map[string][]string) error {
	return d.Do(func() error {
		modules := kernels.Modules()
		for _, m := range slices.Sorted(maps.Keys(entries)) {
			if !slices.Contains(modules, m) {
				return fmt.Errorf("cuda: the kernel build has no module %s (kernels/%s.cu): run make kernels", m, m)
			}
			for _, name := range entries[m] {
				if _, err := d.Function(name); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
