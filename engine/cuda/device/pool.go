package device

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// MemKind says which memory a pool block lives in.
type MemKind int

const (
	DeviceMem MemKind = iota // device memory (cuMemAlloc)
	PinnedMem                // page-locked host memory (cuMemHostAlloc): staging and result buffers
	// HostTierMem is page-locked host memory a host tier (TierHostExperts)
	// holds: the routed experts that do not fit the device, the expert
	// cache's write-back buffers and the voice cache's snapshots. It has its
	// own account: the tier admits it against the host's available memory
	// (PlanTier), not against the pinned cap, which bounds the buffers.
	HostTierMem
	memKinds
)

func (k MemKind) String() string {
	switch k {
	case PinnedMem:
		return "pinned host"
	case HostTierMem:
		return "pinned host (host tier)"
	}
	return "device"
}

// Driver is what a Pool needs from the CUDA driver. The real one calls it on
// the context's thread (driver_cuda.go); tests use a fake.
type Driver interface {
	AllocDevice(bytes int64) (uintptr, error)
	FreeDevice(ptr uintptr) error
	AllocPinned(bytes int64) (unsafe.Pointer, error)
	FreePinned(p unsafe.Pointer) error
	// MemInfo is the device's free and total memory now.
	MemInfo() (free, total int64, err error)
}

// ErrOverCap is returned (wrapped) when an allocation or an admission would
// take a pool past its byte cap.
var ErrOverCap = errors.New("over the memory cap")

// PoolStats is one kind of memory's accounting: bytes held now, the most ever
// held, and the cap (0: none).
type PoolStats struct {
	Used, Peak, Cap int64
}

// Pool hands out device and pinned host blocks under a byte cap per kind.
//
// An allocation first reserves its bytes under the lock, then calls the driver
// without the lock; a failed call refunds the reservation. So concurrent
// allocations can never together pass the cap, and a refused or failed one
// leaves Used and Peak as they were: those count only blocks the driver gave.
type Pool struct {
	drv Driver

	mu       sync.Mutex
	acct     [memKinds]account
	headroom int64 // device bytes Admit leaves free for the driver and kernels
}

type account struct {
	cap      int64 // 0: no cap
	reserved int64 // held + in-flight allocations
	held     int64
	peak     int64
}

// Block is one allocation from a Pool. Exactly one of Ptr (device) and Host
// (pinned: PinnedMem, HostTierMem) is set.
type Block struct {
	Kind  MemKind
	Ptr   uintptr
	Host  unsafe.Pointer
	Bytes int64

	pool  *Pool
	freed bool
}

// DefaultHeadroom is the device memory Admit keeps free beyond a model's
// bytes: the driver's own use, kernel stacks and launch queues.
const DefaultHeadroom = 512 << 20

// NewPool makes a pool over drv with byte caps for device and pinned memory
// (0: no cap).
func NewPool(drv Driver, deviceCap, pinnedCap int64) *Pool {
	p := &Pool{drv: drv, headroom: DefaultHeadroom}
	p.acct[DeviceMem].cap = deviceCap
	p.acct[PinnedMem].cap = pinnedCap
	return p
}

// Alloc takes bytes of kind from the driver, within the cap.
func (p *Pool) Alloc(kind MemKind, bytes int64) (*Block, error) {
	if bytes <= 0 || kind < 0 || kind >= memKinds {
		return nil, fmt.Errorf("cuda pool: %s allocation of %d bytes", kind, bytes)
	}
	if err := p.reserve(kind, bytes); err != nil {
		return nil, err
	}
	b := &Block{Kind: kind, Bytes: bytes, pool: p}
	var err error
	if kind == DeviceMem {
		b.Ptr, err = p.drv.AllocDevice(bytes)
	} else {
		b.Host, err = p.drv.AllocPinned(bytes)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	a := &p.acct[kind]
	if err != nil {
		a.reserved -= bytes
		return nil, fmt.Errorf("cuda pool: %s allocation of %d bytes: %w", kind, bytes, err)
	}
	a.held += bytes
	a.peak = max(a.peak, a.held)
	return b, nil
}

func (p *Pool) reserve(kind MemKind, bytes int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := &p.acct[kind]
	if a.cap > 0 && a.reserved+bytes > a.cap {
		return fmt.Errorf("cuda pool: %s allocation of %d bytes with %d in use of a %d-byte cap: %w",
			kind, bytes, a.reserved, a.cap, ErrOverCap)
	}
	a.reserved += bytes
	return nil
}

// Free gives the block back to the driver. A second Free is an error and
// changes nothing.
func (b *Block) Free() error {
	p := b.pool
	p.mu.Lock()
	if b.freed {
		p.mu.Unlock()
		return fmt.Errorf("cuda pool: %s block of %d bytes freed twice", b.Kind, b.Bytes)
	}
	b.freed = true
	p.mu.Unlock()
	var err error
	if b.Kind == DeviceMem {
		err = p.drv.FreeDevice(b.Ptr)
	} else {
		err = p.drv.FreePinned(b.Host)
	}
	p.mu.Lock()
	a := &p.acct[b.Kind]
	a.held -= b.Bytes
	a.reserved -= b.Bytes
	p.mu.Unlock()
	if err != nil {
		return fmt.Errorf("cuda pool: free %s block of %d bytes: %w", b.Kind, b.Bytes, err)
	}
	return nil
}

// Stats is the accounting of one kind of memory.
func (p *Pool) Stats(kind MemKind) PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.acct[kind]
	return PoolStats{Used: a.held, Peak: a.peak, Cap: a.cap}
}

// Admit checks, before any weight is copied, that a model needing bytes of
// device memory fits both under the cap (with what is held already) and in the
// device's free memory less the headroom. It allocates nothing.
func (p *Pool) Admit(bytes int64) error {
	free, total, err := p.drv.MemInfo()
	if err != nil {
		return fmt.Errorf("cuda pool: admit %d bytes: device memory info: %w", bytes, err)
	}
	p.mu.Lock()
	a := p.acct[DeviceMem]
	headroom := p.headroom
	p.mu.Unlock()
	if a.cap > 0 && a.reserved+bytes > a.cap {
		return fmt.Errorf("cuda pool: model needs %s of device memory, %s in use of a %s cap: %w",
			mib(bytes), mib(a.reserved), mib(a.cap), ErrOverCap)
	}
	if bytes+headroom > free {
		return fmt.Errorf("cuda pool: model needs %s of device memory plus %s headroom; the device has %s free of %s",
			mib(bytes), mib(headroom), mib(free), mib(total))
	}
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// SetCap sets kind's byte cap (0: none) for later allocations and
// admissions; blocks already held stay.
func (p *Pool) SetCap(kind MemKind, cap int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acct[kind].cap = cap
}

// Headroom is the device memory Admit keeps free beyond a model's bytes.
func (p *Pool) Headroom() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.headroom
}
