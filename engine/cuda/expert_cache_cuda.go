//go:build cuda

package cuda

import (
	"fmt"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"proscenium/engine/cuda/device"
	"proscenium/engine/cuda/kernel"
)

// ExpertRef is what an expert kernel of a decode step reads a layer's
// experts by under an expert cache: the layer's row of the table (its
// EXPERT_WORDS words per expert, kernels/expert_addr.cuh) and of the
// statistics. Zero: the experts are at the packed layout's offsets.
type ExpertRef struct {
	Table, Stats kernel.Ptr
}

// gateUp and down are the table row at the part a kernel projects.
func (r ExpertRef) gateUp() kernel.Ptr { return r.Table }
func (r ExpertRef) down() kernel.Ptr {
	if r.Table == 0 {
		return 0
	}
	return r.Table.Add(int64(kernel.ExpertDown) * 8)
}

// ExpertCache is a host tier's expert cache on the device (expert_cache.go
// has the policy): the table the step's expert kernels read every expert's
// address from, the statistics they tally, and the promotions between
// frames, each a copy of one expert from host memory into a slot on a copy
// stream of its own, overlapping the frames after it.
//
// The swap protocol keeps every frame graph in flight reading whole,
// unchanging weights. A victim without a host copy is first copied from its
// slot into a backing buffer on the copy stream (its slot is only read
// meanwhile). Then its table entry goes back to host memory on the compute
// stream (after the frames enqueued so far, before the next), an event there
// gates the copy of the promoted expert into the slot, and the promoted
// entry switches to the slot, again on the compute stream, only once that
// copy's event has completed. Events are polled at later frames, never
// waited on: a promotion costs the step nothing but the bus bytes.
type ExpertCache struct {
	d *Device
	w *DeviceWeights

	mu     sync.Mutex // guards policy (the device thread changes it, readouts read its stats)
	policy *ExpertCachePolicy

	table, stats *Block // device: [layers][E][EXPERT_WORDS] addresses, [layers][2+E] counts
	statsHost    *Block // pinned: the last read-back of stats
	backing      *Block // pinned backing buffers (ExpertCacheBacking), and as the device reads them
	backingDev   *Block
	statsEvent   cu.Event
	statsPending bool
	lastHits     []uint32 // per layer: the hits and misses at the last fold
	lastMisses   []uint32
	uses         []uint32

	copies cu.Stream
	moves  []expertMove // swaps in flight
	events []cu.Event   // idle events
}

// expertMove is a swap in flight: writing its victim back (writeBack) or
// copying its promoted expert in; done is that copy's event.
type expertMove struct {
	sw        ExpertSwap
	writeBack bool
	done      cu.Event
}

const expertWords = kernel.ExpertWords

// startExpertCache builds w's expert cache when w has experts in host
// memory: the table and statistics, the backing buffers and the copy
// stream. Nothing stays allocated on failure.
func (d *Device) startExpertCache(w *DeviceWeights, cfg ExpertCacheConfig) (err error) {
	if w.Cache != nil || len(w.Host) == 0 || w.Stage == nil {
		return nil
	}
	l := w.Layout
	layers, E := len(l.Experts), l.Experts[0].Experts
	deviceLayers := 0
	for deviceLayers < layers && !l.Experts[deviceLayers].Host {
		deviceLayers++
	}
	for i := range layers {
		if x := l.Experts[i]; x.Experts != E || x.Host != (i >= deviceLayers) || x.Host != (w.Host[i] != nil) ||
			x.GateUpMatBytes != l.Experts[0].GateUpMatBytes || x.DownMatBytes != l.Experts[0].DownMatBytes {
			return fmt.Errorf("expert cache: layer %d's experts are not laid out as a tier's (first layers on the device, the same shapes)", i)
		}
	}
	xb := l.Experts[0].ExpertBytes()
	nb := int(ExpertCacheBacking(deviceLayers*E, xb) / backingStride(xb))
	policy, err := NewExpertCachePolicy(cfg, layers, E, deviceLayers, w.home, nb, xb)
	if err != nil {
		return err
	}
	c := &ExpertCache{d: d, w: w, policy: policy, lastHits: make([]uint32, layers), lastMisses: make([]uint32, layers),
		uses: make([]uint32, layers*E)}
	defer func() {
		if err != nil {
			c.free()
		}
	}()
	words := make([]uint64, layers*E*expertWords)
	if c.table, err = d.Alloc(int64(len(words)) * 8); err != nil {
		return fmt.Errorf("expert cache: the table: %w", err)
	}
	statBytes := int64(layers*(kernel.ExpertStatUses+E)) * 4
	if c.stats, err = d.Alloc(statBytes); err != nil {
		return fmt.Errorf("expert cache: the statistics: %w", err)
	}
	if c.statsHost, err = d.AllocPinned(statBytes); err != nil {
		return fmt.Errorf("expert cache: the statistics' read-back: %w", err)
	}
	if nb > 0 {
		if err := d.Do(func() (err error) {
			c.backing, err = d.Pool.Alloc(HostTierMem, int64(nb)*backingStride(xb))
			return
		}); err != nil {
			return fmt.Errorf("expert cache: %d backing buffers in host memory: %w", nb, err)
		}
		var ptr uintptr
		if err := d.Do(func() (err error) { ptr, err = device.HostDevicePointer(c.backing.Host); return }); err != nil {
			return fmt.Errorf("expert cache: the backing buffers: %w", err)
		}
		c.backingDev = &Block{Kind: DeviceMem, Ptr: ptr, Bytes: c.backing.Bytes}
	}
	for k := range layers * E {
		c.entry(k, words[k*expertWords:(k+1)*expertWords])
	}
	return d.Do(func() error {
		if err := cu.MemcpyHtoD(cu.DevicePtr(c.table.Ptr), unsafe.Pointer(&words[0]), c.table.Bytes); err != nil {
			return err
		}
		if err := cu.MemsetD8(cu.DevicePtr(c.stats.Ptr), 0, statBytes); err != nil {
			return err
		}
		var err error
		if c.statsEvent, err = cu.MakeEvent(cu.DisableTiming); err != nil {
			return err
		}
		if c.copies, err = cu.MakeStream(cu.NonBlocking); err != nil {
			return err
		}
		w.Cache = c
		return nil
	})
}

// parts is key's four parts where the policy places it now (device
// addresses), and whether that is host memory.
func (c *ExpertCache) parts(key int) (addr [4]uintptr, bytes [4]int64, host bool) {
	E := c.policy.Experts
	l, e := key/E, key%E
	x := c.w.Layout.Experts[l]
	switch s := c.policy.Where(key); s {
	case ExpertOnHost:
		if b := c.policy.Backed(key); b >= 0 {
			addr, bytes = backingParts(x, c.backingDev.Ptr, b)
		} else {
			addr, bytes = expertParts(x, c.w.HostDevice[l].Ptr, e)
		}
		return addr, bytes, true
	case ExpertOnStage:
		addr, bytes = expertParts(x, c.w.Stage.Ptr, e)
	default:
		addr, bytes = expertParts(c.w.Layout.Experts[s/E], c.w.Arena.Ptr, s%E)
	}
	return addr, bytes, false
}

// hostCopy is key's copy in host memory as the host addresses it (a host
// layer's block, or its backing buffer), for a promotion's copy.
func (c *ExpertCache) hostCopy(key int) (src [4]unsafe.Pointer, bytes [4]int64) {
	E := c.policy.Experts
	l, e := key/E, key%E
	x := c.w.Layout.Experts[l]
	var off [4]uintptr
	base := c.w.Host[l]
	if b := c.policy.Backed(key); b >= 0 {
		off, bytes = backingParts(x, 0, b)
		base = c.backing
	} else {
		off, bytes = expertParts(x, 0, e)
	}
	for i := range src {
		src[i] = unsafe.Add(base.Host, off[i])
	}
	return src, bytes
}

// entry writes key's table words as the policy places it now.
func (c *ExpertCache) entry(key int, words []uint64) {
	addr, _, host := c.parts(key)
	for i, a := range addr {
		words[i] = uint64(a)
	}
	if host {
		words[kernel.ExpertGateUp] |= kernel.ExpertHostBit
		words[kernel.ExpertDown] |= kernel.ExpertHostBit
	}
}

// ref is layer i's table and statistics rows (zero without a cache).
func (c *ExpertCache) ref(i int) ExpertRef {
	if c == nil {
		return ExpertRef{}
	}
	E := c.policy.Experts
	return ExpertRef{Table: kernel.Ptr(c.table.Ptr).Add(int64(i*E*expertWords) * 8),
		Stats: kernel.Ptr(c.stats.Ptr).Add(int64(i*(kernel.ExpertStatUses+E)) * 4)}
}

// setEntry enqueues on s the rewrite of key's table entry (as 32-bit
// words: memsets carry their values, so nothing on the host must outlive
// the call).
func (c *ExpertCache) setEntry(s cu.Stream, key int) error {
	var words [expertWords]uint64
	c.entry(key, words[:])
	base := c.table.Ptr + uintptr(key*expertWords*8)
	for i, w := range words {
		for h := range 2 {
			if err := cu.MemsetD32Async(cu.DevicePtr(base+uintptr(8*i+4*h)), uint(uint32(w>>(32*h))), 1, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// intact says whether device layer i still reads as laid out (a host
// layer always does).
func (c *ExpertCache) intact(i int) bool {
	if c == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return i >= len(c.policy.owner)/c.policy.Experts || c.policy.Intact(i)
}

// tick is called on the device thread after each frame's graph is enqueued
// on q: it advances the swaps whose copies have completed, folds the
// statistics read back after an earlier frame and starts this frame's
// swaps, then reads the statistics back again.
func (c *ExpertCache) tick(q *Queue) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := q.Stream()
	keep := c.moves[:0]
	for _, m := range c.moves {
		switch err := m.done.Query(); {
		case err == error(cu.NotReady):
			keep = append(keep, m)
			continue
		case err != nil:
			return fmt.Errorf("expert cache: a promotion's copy: %w", err)
		}
		c.events = append(c.events, m.done)
		if m.writeBack {
			next, err := c.copyIn(s, m.sw)
			if err != nil {
				return err
			}
			keep = append(keep, next)
			continue
		}
		c.policy.Done(m.sw.Promote)
		if err := c.setEntry(s, m.sw.Promote); err != nil {
			return err
		}
	}
	c.moves = keep
	if c.statsPending {
		switch err := c.statsEvent.Query(); {
		case err == error(cu.NotReady):
			return nil
		case err != nil:
			return fmt.Errorf("expert cache: reading the statistics back: %w", err)
		}
		c.statsPending = false
		if err := c.fold(); err != nil {
			return err
		}
		if err := c.start(s); err != nil {
			return err
		}
	}
	if err := cu.MemcpyDtoHAsync(c.statsHost.Host, cu.DevicePtr(c.stats.Ptr), c.stats.Bytes, s); err != nil {
		return err
	}
	if err := c.statsEvent.Record(s); err != nil {
		return err
	}
	c.statsPending = true
	return nil
}

// fold passes the read-back statistics to the policy.
func (c *ExpertCache) fold() error {
	E := c.policy.Experts
	row := kernel.ExpertStatUses + E
	counts := unsafe.Slice((*uint32)(c.statsHost.Host), c.statsHost.Bytes/4)
	var hits, misses int64
	for l := range c.policy.Layers {
		r := counts[l*row : (l+1)*row]
		hits += int64(r[kernel.ExpertStatHits] - c.lastHits[l])
		misses += int64(r[kernel.ExpertStatMisses] - c.lastMisses[l])
		c.lastHits[l], c.lastMisses[l] = r[kernel.ExpertStatHits], r[kernel.ExpertStatMisses]
		copy(c.uses[l*E:], r[kernel.ExpertStatUses:])
	}
	return c.policy.Fold(c.uses, hits, misses)
}

// start begins the policy's swaps for this frame: a victim without a host
// copy is written back first; the others go straight to copyIn.
func (c *ExpertCache) start(s cu.Stream) error {
	E := c.policy.Experts
	for _, sw := range c.policy.Plan() {
		if sw.WriteBack < 0 {
			m, err := c.copyIn(s, sw)
			if err != nil {
				return err
			}
			c.moves = append(c.moves, m)
			continue
		}
		// The slot is only read until the victim's entry leaves it (copyIn).
		dst, n := backingParts(c.w.Layout.Experts[sw.Evict/E], 0, sw.WriteBack)
		src, _ := expertParts(c.w.Layout.Experts[sw.Slot/E], c.w.Arena.Ptr, sw.Slot%E)
		for i := range src {
			if n[i] == 0 {
				continue
			}
			if err := cu.MemcpyDtoHAsync(unsafe.Add(c.backing.Host, dst[i]), cu.DevicePtr(src[i]), n[i], c.copies); err != nil {
				return err
			}
		}
		done, err := c.record(c.copies)
		if err != nil {
			return err
		}
		c.moves = append(c.moves, expertMove{sw: sw, writeBack: true, done: done})
	}
	return nil
}

// copyIn points sw's victim at its host copy on s, then, once s has passed
// that (every frame enqueued so far done with the slot), copies the
// promoted expert into the slot on the copy stream.
func (c *ExpertCache) copyIn(s cu.Stream, sw ExpertSwap) (expertMove, error) {
	E := c.policy.Experts
	if sw.Evict >= 0 {
		if err := c.setEntry(s, sw.Evict); err != nil {
			return expertMove{}, err
		}
		c.policy.EvictDone(sw.Evict)
	}
	evicted, err := c.record(s)
	if err != nil {
		return expertMove{}, err
	}
	err = c.copies.Wait(evicted, 0)
	c.events = append(c.events, evicted) // the wait holds what it needs: free to record again
	if err != nil {
		return expertMove{}, err
	}
	src, n := c.hostCopy(sw.Promote)
	dst, _ := expertParts(c.w.Layout.Experts[sw.Slot/E], c.w.Arena.Ptr, sw.Slot%E)
	for i := range src {
		if n[i] == 0 {
			continue
		}
		if err := cu.MemcpyHtoDAsync(cu.DevicePtr(dst[i]), src[i], n[i], c.copies); err != nil {
			return expertMove{}, err
		}
	}
	done, err := c.record(c.copies)
	return expertMove{sw: sw, done: done}, err
}

// record records an idle event (made on first need) on s.
func (c *ExpertCache) record(s cu.Stream) (cu.Event, error) {
	var ev cu.Event
	if n := len(c.events); n > 0 {
		ev, c.events = c.events[n-1], c.events[:n-1]
	} else {
		var err error
		if ev, err = cu.MakeEvent(cu.DisableTiming); err != nil {
			return ev, err
		}
	}
	return ev, ev.Record(s)
}

// Stats is the cache's counts now (zero without a cache).
func (c *ExpertCache) Stats() ExpertCacheStats {
	if c == nil {
		return ExpertCacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.policy.Stats()
}

// free gives the cache's memory, stream and events back (on failure or at Free).
func (c *ExpertCache) free() {
	d := c.d
	d.Do(func() error {
		if c.copies != (cu.Stream{}) {
			c.copies.Synchronize()
			c.copies.Destroy()
		}
		for _, m := range c.moves {
			c.events = append(c.events, m.done)
		}
		for i := range c.events {
			cu.DestroyEvent(&c.events[i])
		}
		if c.statsEvent != (cu.Event{}) {
			cu.DestroyEvent(&c.statsEvent)
		}
		return nil
	})
	freeBlocks(d, []*Block{c.table, c.stats, c.statsHost, c.backing})
}
