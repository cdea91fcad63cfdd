package device

import (
	"errors"
	"sync"
	"testing"
	"unsafe"
)

// fakeDriver hands out fake addresses, tracks live bytes and the most ever live
// (what the device would have seen), and fails calls on demand.
type fakeDriver struct {
	mu         sync.Mutex
	next       uintptr
	live       map[uintptr]int64
	liveBytes  int64
	maxLive    int64
	failAlloc  bool
	free, totl int64
	pinned     [][]byte // keeps fake pinned buffers reachable
}

func newFakeDriver() *fakeDriver {
	return &fakeDriver{next: 0x1000, live: map[uintptr]int64{}, free: 8 << 30, totl: 16 << 30}
}

func (d *fakeDriver) alloc(n int64) (uintptr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failAlloc {
		return 0, errors.New("fake: OutOfMemory")
	}
	p := d.next
	d.next += uintptr(n)
	d.live[p] = n
	d.liveBytes += n
	d.maxLive = max(d.maxLive, d.liveBytes)
	return p, nil
}

func (d *fakeDriver) release(p uintptr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, ok := d.live[p]
	if !ok {
		return errors.New("fake: invalid pointer")
	}
	delete(d.live, p)
	d.liveBytes -= n
	return nil
}

func (d *fakeDriver) AllocDevice(n int64) (uintptr, error) { return d.alloc(n) }
func (d *fakeDriver) FreeDevice(p uintptr) error           { return d.release(p) }
func (d *fakeDriver) AllocPinned(n int64) (unsafe.Pointer, error) {
	if _, err := d.alloc(n); err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	d.mu.Lock()
	d.pinned = append(d.pinned, buf)
	d.mu.Unlock()
	return unsafe.Pointer(&buf[0]), nil
}
func (d *fakeDriver) FreePinned(unsafe.Pointer) error { return nil }
func (d *fakeDriver) MemInfo() (int64, int64, error)  { return d.free, d.totl, nil }

func TestPoolConcurrentAllocationsNeverPassTheCap(t *testing.T) {
	drv := newFakeDriver()
	const capBytes, each, workers = 10 << 20, 3 << 20, 16
	p := NewPool(drv, capBytes, 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var granted, refused int
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				b, err := p.Alloc(DeviceMem, each)
				mu.Lock()
				if err != nil {
					if !errors.Is(err, ErrOverCap) {
						t.Errorf("unexpected error: %v", err)
					}
					refused++
				} else {
					granted++
				}
				mu.Unlock()
				if b != nil {
					if err := b.Free(); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if drv.maxLive > capBytes {
		t.Fatalf("driver saw %d bytes live at once, cap %d", drv.maxLive, capBytes)
	}
	s := p.Stats(DeviceMem)
	if s.Used != 0 || s.Peak > capBytes || s.Peak < each || s.Cap != capBytes {
		t.Fatalf("stats after all frees: %+v", s)
	}
	if granted == 0 {
		t.Fatal("no allocation was granted")
	}
	t.Logf("granted %d, refused %d, driver peak %d bytes", granted, refused, drv.maxLive)
}

func TestPoolRefusalAndDriverFailureLeaveStatsUnchanged(t *testing.T) {
	drv := newFakeDriver()
	p := NewPool(drv, 100, 64)
	a, err := p.Alloc(DeviceMem, 60)
	if err != nil {
		t.Fatal(err)
	}
	before := p.Stats(DeviceMem)
	cases := []struct {
		name      string
		kind      MemKind
		bytes     int64
		failAlloc bool
		overCap   bool
	}{
		{"over the cap", DeviceMem, 41, false, true},
		{"driver out of memory", DeviceMem, 40, true, false},
		{"zero bytes", DeviceMem, 0, false, false},
		{"pinned over its own cap", PinnedMem, 65, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			drv.failAlloc = c.failAlloc
			defer func() { drv.failAlloc = false }()
			b, err := p.Alloc(c.kind, c.bytes)
			if err == nil || b != nil {
				t.Fatalf("allocation of %d bytes succeeded", c.bytes)
			}
			if errors.Is(err, ErrOverCap) != c.overCap {
				t.Fatalf("error %v: over cap = %v, want %v", err, !c.overCap, c.overCap)
			}
			if got := p.Stats(DeviceMem); got != before {
				t.Fatalf("device stats changed: %+v → %+v", before, got)
			}
			if got := p.Stats(PinnedMem); got.Used != 0 || got.Peak != 0 {
				t.Fatalf("pinned stats changed: %+v", got)
			}
		})
	}
	// The refunded bytes are usable: exactly up to the cap succeeds.
	b, err := p.Alloc(DeviceMem, 40)
	if err != nil {
		t.Fatalf("allocation up to the cap after refunds: %v", err)
	}
	if s := p.Stats(DeviceMem); s.Used != 100 || s.Peak != 100 {
		t.Fatalf("stats at the cap: %+v", s)
	}
	for _, blk := range []*Block{a, b} {
		if err := blk.Free(); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Free(); err == nil {
		t.Fatal("second free succeeded")
	}
	if s := p.Stats(DeviceMem); s.Used != 0 || s.Peak != 100 {
		t.Fatalf("stats after frees: %+v", s)
	}
}

func TestPoolAdmit(t *testing.T) {
	drv := newFakeDriver()
	drv.free = 4 << 30
	cases := []struct {
		name    string
		cap     int64
		held    int64
		need    int64
		ok      bool
		overCap bool
	}{
		{"fits", 0, 0, 1 << 30, true, false},
		{"fits under cap", 2 << 30, 512 << 20, 1 << 30, true, false},
		{"over cap with what is held", 2 << 30, 1536 << 20, 1 << 30, false, true},
		{"more than free", 0, 0, 4 << 30, false, false},
		{"eats the headroom", 0, 0, 4<<30 - DefaultHeadroom + 1, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewPool(drv, c.cap, 0)
			if c.held > 0 {
				b, err := p.Alloc(DeviceMem, c.held)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Free()
			}
			before := p.Stats(DeviceMem)
			err := p.Admit(c.need)
			if (err == nil) != c.ok || (err != nil && errors.Is(err, ErrOverCap) != c.overCap) {
				t.Fatalf("Admit(%d) = %v, want ok=%v overCap=%v", c.need, err, c.ok, c.overCap)
			}
			if p.Stats(DeviceMem) != before {
				t.Fatal("Admit changed the accounting")
			}
		})
	}
}

// TestPoolHostTierMem: a host tier's pinned memory has its own account, outside the
// pinned cap that bounds the buffers.
func TestPoolHostTierMem(t *testing.T) {
	p := NewPool(newFakeDriver(), 0, 1<<20)
	b, err := p.Alloc(HostTierMem, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	if b.Host == nil || b.Ptr != 0 {
		t.Errorf("an expert block is host memory: %+v", b)
	}
	if s := p.Stats(HostTierMem); s.Used != 4<<20 || p.Stats(PinnedMem).Used != 0 {
		t.Errorf("experts %+v, pinned %+v", s, p.Stats(PinnedMem))
	}
	if _, err := p.Alloc(PinnedMem, 2<<20); !errors.Is(err, ErrOverCap) {
		t.Errorf("pinned over its cap: %v", err)
	}
	if err := b.Free(); err != nil || p.Stats(HostTierMem).Used != 0 {
		t.Errorf("free: %v, %+v", err, p.Stats(HostTierMem))
	}
	if _, err := p.Alloc(memKinds, 1); err == nil {
		t.Error("an unknown kind: no error")
	}
}
