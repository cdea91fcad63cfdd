//go:build cuda

package cuda

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"proscenium/engine/drama3"
)

// This file is the device side of the voice prefix cache
// (drama3.PrefixCache, docs/MODEL.md "Voice prefix cache"): a snapshot is
// one device block holding, back to back, every region of state the prompt's
// voice prefix leaves — each DeltaNet layer's conv and recurrent state
// (whole), each attention layer's K and V rows of the prefix, each tower
// layer's K and V rows of the prefix — with the row count (the backbone's
// position and the tower's row counter, both the prefix's length). Restoring
// copies the regions back on the stream; the scratch regions hold nothing
// across passes. Snapshots live inside the admitted budget
// (FramesOptions.PrefixCacheBytes is admitted with the model), and when an
// allocation of a take fails the least recently used snapshot is freed
// before the take is (allocForTake). Under a host tier
// (Frames.PrefixCacheInHost) a snapshot is one block of pinned host
// memory instead, which the tier granted from the host's: keeping and
// restoring it cross the bus, and it costs the device nothing.

// stateRegion is a byte range of a device block that carries state across
// rows.
type stateRegion struct {
	block      *Block
	off, bytes int64
	// layer is the backbone layer whose state the region is; -1 for the
	// tower's.
	layer int
	// deltaNet: the region is a DeltaNet state, which later rows overwrite;
	// otherwise a KV cache's rows of the prefix, which later rows leave as
	// they append theirs.
	deltaNet bool
}

// regionBytes is the bytes of regions, back to back: a snapshot's.
func regionBytes(regions []stateRegion) int64 {
	var bytes int64
	for _, r := range regions {
		bytes += r.bytes
	}
	return bytes
}

// prefixRegions lists the regions holding the take's state after the first
// rows prompt rows, in snapshot order: the backbone's of its slot (a set's
// take's own, else the slot in use) and its tower's.
func (f *Frames) prefixRegions(rows int) []stateRegion {
	var out []stateRegion
	p := f.bb.Plan
	slot := f.bb.slot
	if f.inSet {
		slot = f.slot
	}
	for i := range f.bb.layers {
		L := f.bb.slotLayer(&f.bb.layers[i], slot)
		switch {
		case L.dn != nil:
			out = append(out, stateRegion{L.dn.State.Block, L.dn.State.Off, p.DeltaNet.StateBytes(), i, true})
		case L.at != nil:
			row := 4 * int64(p.Attention.KVHeads*p.Attention.HeadDim)
			k, v := L.at.KV, L.at.KV.At(int64(L.at.Capacity)*row) // K then V (AttentionForward)
			out = append(out, stateRegion{k.Block, k.Off, int64(rows) * row, i, false}, stateRegion{v.Block, v.Off, int64(rows) * row, i, false})
		}
	}
	g := f.tower.g
	row := 4 * int64(g.KVHeads*g.HeadDim)
	layer := int64(f.tower.opt.MaxRows) * row // keys, then values (Tower.layer)
	for li := 0; li < f.tower.layers(); li++ {
		base := int64(li) * 2 * layer
		out = append(out, stateRegion{f.tower.kv, base, int64(rows) * row, -1, false}, stateRegion{f.tower.kv, base + layer, int64(rows) * row, -1, false})
	}
	return out
}

// prefixSnapshot is a voice prefix snapshot: one block of device memory, or
// of pinned host memory under a host tier.
type prefixSnapshot struct {
	d     *Device
	block *Block
	rows  int
}

func (s *prefixSnapshot) Bytes() int64 { return s.block.Bytes }

func (s *prefixSnapshot) Release() {
	if s.block != nil {
		s.d.Free(s.block)
		s.block = nil
	}
}

// prefixSalt is what a snapshot depends on beyond the model and the rows:
// how the prefill computed them (the device's numerics policy, which picks
// the kernel instances at each launch, and the expert path of its passes).
// A snapshot made under fast is not restored into an exact take, nor the
// other way round.
func (f *Frames) prefixSalt() string {
	return fmt.Sprintf("numerics=%s experts=%v/%d", f.d.Numerics, f.bb.Experts, f.bb.ExpertGroup)
}

// allocForTake allocates device memory for the take, freeing voice prefix
// snapshots (least recently used first) while the pool refuses: a cached
// voice goes before a take fails. Snapshots in host memory free no device
// memory, so they stay.
func (f *Frames) allocForTake(bytes int64) (*Block, error) {
	for {
		b, err := f.d.Alloc(bytes)
		if err == nil || !f.snapshotsOnDevice() || !f.prefixes.Evict() {
			return b, err
		}
	}
}

// snapshotsOnDevice says whether the voice cache's snapshots take device
// memory (freeing one makes room for a take).
func (f *Frames) snapshotsOnDevice() bool {
	return f.prefixes != nil && !f.PrefixCacheInHost()
}

// allocSnapshot takes a snapshot's block: device memory (freeing older
// snapshots while the pool refuses), or under a host tier pinned host
// memory of the tier's account (Frames.PrefixCacheInHost; the cache's own
// cap bounds it: the tier granted it).
func (f *Frames) allocSnapshot(bytes int64) (*Block, error) {
	if !f.PrefixCacheInHost() {
		return f.allocForTake(bytes)
	}
	var b *Block
	err := f.d.Do(func() (err error) { b, err = f.d.Pool.Alloc(HostTierMem, bytes); return })
	return b, err
}

// copyRegions enqueues the copies between the regions and a snapshot block
// (toSnapshot: regions → block; otherwise block → regions): device to
// device, or across the bus for a snapshot in pinned host memory.
func (f *Frames) copyRegions(regions []stateRegion, block *Block, toSnapshot bool) error {
	return f.d.Run(func(q *Queue) error { return enqueueRegionCopies(q, regions, block, toSnapshot, nil) })
}

// enqueueRegionCopies enqueues on q copyRegions' copies of the regions that
// want takes (nil: every one), each at its place in the block.
func enqueueRegionCopies(q *Queue, regions []stateRegion, block *Block, toSnapshot bool, want func(stateRegion) bool) error {
	var at int64
	for _, r := range regions {
		if r.bytes == 0 {
			continue
		}
		if want != nil && !want(r) {
			at += r.bytes
			continue
		}
		live := cu.DevicePtr(r.block.Ptr + uintptr(r.off))
		var err error
		switch {
		case block.Host != nil && toSnapshot:
			err = cu.MemcpyDtoHAsync(unsafe.Add(block.Host, at), live, r.bytes, q.Stream())
		case block.Host != nil:
			err = cu.MemcpyHtoDAsync(live, unsafe.Add(block.Host, at), r.bytes, q.Stream())
		case toSnapshot:
			err = cu.MemcpyDtoDAsync(cu.DevicePtr(block.Ptr+uintptr(at)), live, r.bytes, q.Stream())
		default:
			err = cu.MemcpyDtoDAsync(live, cu.DevicePtr(block.Ptr+uintptr(at)), r.bytes, q.Stream())
		}
		if err != nil {
			return err
		}
		at += r.bytes
	}
	return nil
}

// enqueueRegionPairs enqueues on q a device-to-device copy of each region
// of from that want takes (nil: every one) onto the region of to at its
// index: one take's state onto another's (the same model's regions, in
// prefixRegions' order).
func enqueueRegionPairs(q *Queue, from, to []stateRegion, want func(stateRegion) bool) error {
	if len(from) != len(to) {
		return fmt.Errorf("cuda frames: %d state regions copied onto %d", len(from), len(to))
	}
	for k, r := range from {
		if r.bytes == 0 || (want != nil && !want(r)) {
			continue
		}
		if to[k].bytes != r.bytes {
			return fmt.Errorf("cuda frames: a state region of %d bytes copied onto one of %d", r.bytes, to[k].bytes)
		}
		src, dst := cu.DevicePtr(r.block.Ptr+uintptr(r.off)), cu.DevicePtr(to[k].block.Ptr+uintptr(to[k].off))
		if err := cu.MemcpyDtoDAsync(dst, src, r.bytes, q.Stream()); err != nil {
			return err
		}
	}
	return nil
}

// snapshotBlock is the regions of the state after the first rows prompt
// rows and a block to snapshot them into, or a nil block when the cache
// cannot hold them or the pool refuses the memory even with the older
// snapshots freed: the take goes on without a snapshot.
func (f *Frames) snapshotBlock(rows int) ([]stateRegion, *Block) {
	regions := f.prefixRegions(rows)
	bytes := regionBytes(regions)
	if !f.prefixes.Fits(bytes) {
		return regions, nil
	}
	block, err := f.allocSnapshot(bytes)
	if err != nil {
		return regions, nil // memory is short: no snapshot this time
	}
	return regions, block
}

// keepPrefix snapshots the state after the first rows prompt rows into the
// cache under key (snapshotBlock: skipped when there is no room).
func (f *Frames) keepPrefix(key drama3.PrefixKey, rows int) error {
	regions, block := f.snapshotBlock(rows)
	if block == nil {
		return nil
	}
	if err := f.copyRegions(regions, block, true); err != nil {
		f.d.Free(block)
		f.fault = err
		return err
	}
	f.prefixes.Put(key, &prefixSnapshot{d: f.d, block: block, rows: rows})
	return nil
}

// restorePrefix makes the backbone's and the tower's state the snapshot's
// (the tower's counters are set by the caller: Tower.Begin, and its
// position by writeControl).
func (f *Frames) restorePrefix(s *prefixSnapshot) error {
	regions := f.prefixRegions(s.rows)
	if bytes := regionBytes(regions); bytes != s.block.Bytes {
		return fmt.Errorf("cuda frames: a prefix snapshot of %d bytes, the model's state after %d rows is %d", s.block.Bytes, s.rows, bytes)
	}
	if err := f.d.Sync(); err != nil {
		return err
	}
	if err := f.copyRegions(regions, s.block, false); err != nil {
		f.fault = err
		return err
	}
	return f.bb.SetLen(s.rows) // the slot the take is in (Backbone.UseSlot)
}

// PrefixCache implements drama3.PrefixCacher (nil: no cache).
func (f *Frames) PrefixCache() *drama3.PrefixCache { return f.prefixes }

// PrefixKeyOf implements drama3.PrefixCacher.
func (f *Frames) PrefixKeyOf(p drama3.Prompt) (drama3.PrefixKey, bool) {
	n := p.VoicePrefix()
	if n == 0 || f.prefixes == nil {
		return drama3.PrefixKey{}, false
	}
	return p.PrefixKey(n, f.prefixSalt()), true
}

// LastPrefix implements drama3.PrefixCacher.
func (f *Frames) LastPrefix() drama3.PrefixOutcome { return f.lastPrefix }

var _ drama3.PrefixCacher = (*Frames)(nil)
