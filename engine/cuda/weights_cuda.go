//go:build cuda

package cuda

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cuda/device"
	"proscenium/engine/drama3"
)

// DeviceWeights is a checkpoint's bound tensors in one device arena, laid
// out by LayoutWeights, and the routed experts of the layers the layout puts
// in host memory (LayoutWeightsTier) in pinned blocks, one per layer.
type DeviceWeights struct {
	Arena   *Block
	Layout  *WeightLayout
	Weights *drama3.Weights
	// Host is, per layer, its experts' pinned block (nil: in the arena),
	// and HostDevice the same memory as the kernels address it.
	Host       []*Block
	HostDevice []*Block
	// Stage is the device buffer a prefill streams a host layer's experts
	// through (TierPlan.Stage; nil when every expert is on the device).
	Stage *Block
	// Tier is where the load put the model's bytes (PlanTier).
	Tier TierPlan
}

// Experts is the block layer i's expert kernels read, at the offsets of
// Layout.Experts[i]: the arena, or the layer's pinned host block as the
// device addresses it (the kernels read it over the bus).
func (w *DeviceWeights) Experts(i int) *Block {
	if i < len(w.HostDevice) && w.HostDevice[i] != nil {
		return w.HostDevice[i]
	}
	return w.Arena
}

// AllocHostExperts takes, for w's layout, a pinned block for every host
// layer's experts, cleared (the padding of packed experts must read as
// zero), its device address, and the device stage a prefill streams them
// through (none without host layers), into w.Host, w.HostDevice and
// w.Stage. On failure nothing of them stays allocated.
func (d *Device) AllocHostExperts(w *DeviceWeights) (err error) {
	layout := w.Layout
	host, dev := make([]*Block, len(layout.Experts)), make([]*Block, len(layout.Experts))
	var stage *Block
	defer func() {
		if err != nil {
			freeBlocks(d, append(host, stage))
			return
		}
		w.Host, w.HostDevice, w.Stage = host, dev, stage
	}()
	var span int64
	for _, x := range layout.Experts {
		if x.Host {
			span = max(span, x.SpanBytes())
		}
	}
	if span == 0 {
		return nil
	}
	if stage, err = d.Alloc(span); err != nil {
		return fmt.Errorf("gpu weights: the prefill stage for experts in host memory: %w", err)
	}
	for i, x := range layout.Experts {
		if !x.Host {
			continue
		}
		if err = d.Do(func() (err error) { host[i], err = d.Pool.Alloc(ExpertMem, x.SpanBytes()); return }); err != nil {
			return fmt.Errorf("gpu weights: layer %d's experts in host memory: %w", i, err)
		}
		clear(unsafe.Slice((*byte)(host[i].Host), host[i].Bytes))
		var ptr uintptr
		if err = d.Do(func() (err error) { ptr, err = device.HostDevicePointer(host[i].Host); return }); err != nil {
			return fmt.Errorf("gpu weights: layer %d's experts in host memory: %w", i, err)
		}
		// A view for the launches, as the backbone's scratch views are: never freed itself.
		dev[i] = &Block{Kind: DeviceMem, Ptr: ptr, Bytes: host[i].Bytes}
	}
	return nil
}

func freeBlocks(d *Device, blocks []*Block) {
	for _, b := range blocks {
		if b != nil {
			d.Free(b)
		}
	}
}

// Tensor is p's place in the arena.
func (w *DeviceWeights) Tensor(p *drama3.Param) (Tensor, error) {
	if p == nil {
		return Tensor{}, fmt.Errorf("gpu weights: tensor not bound")
	}
	t, ok := w.Layout.Tensor(p)
	if !ok {
		return Tensor{}, fmt.Errorf("gpu weights: tensor %s is not on the device", p.Name)
	}
	return Tensor{Block: w.Arena, Off: t.Off}, nil
}

// Free gives the arena, the host blocks and the stage back.
func (w *DeviceWeights) Free(d *Device) error {
	freeBlocks(d, append(w.Host, w.Stage))
	return d.Free(w.Arena)
}

// LoadProgress receives the bytes on the device so far and the total.
type LoadProgress func(done, total int64)

// loadBufferBytes is the size of each pinned staging buffer for a load of
// stored bytes: the loader's default, or less for a small checkpoint.
func loadBufferBytes(stored int64) int {
	n := int64(checkpoint.DefaultLoadBuffer)
	if s := (stored + checkpoint.DirectAlign - 1) / checkpoint.DirectAlign * checkpoint.DirectAlign; s < n {
		n = max(s, checkpoint.DirectAlign)
	}
	return int(n)
}

// LoadWeights allocates the arena for layout and streams the checkpoint's
// tensors into it (checkpoint.Index.Load: O_DIRECT into two pinned buffers,
// one read while the other is copied, tensors in file order); host layers'
// experts are copied into their pinned blocks. The caller has admitted the
// bytes (Pool.Admit, PlanTier) before. On failure nothing stays allocated.
func (d *Device) LoadWeights(ix *checkpoint.Index, w *drama3.Weights, layout *WeightLayout, progress LoadProgress) (*DeviceWeights, error) {
	arena, err := d.Alloc(layout.Bytes)
	if err != nil {
		return nil, err
	}
	dw := &DeviceWeights{Arena: arena, Layout: layout, Weights: w}
	if err := d.AllocHostExperts(dw); err != nil {
		d.Free(arena)
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			dw.Free(d)
		}
	}()
	// The padding of packed experts must read as zero.
	if err := d.Do(func() error { return cu.MemsetD8(cu.DevicePtr(arena.Ptr), 0, layout.Bytes) }); err != nil {
		return nil, fmt.Errorf("gpu weights: clearing the arena: %w", err)
	}
	var pinned []*Block
	defer func() {
		for _, b := range pinned {
			d.Free(b)
		}
	}()
	opts := checkpoint.LoadOptions{
		BufferSize: loadBufferBytes(layout.StoredBytes()),
		Alloc: func(n int) ([]byte, error) {
			b, err := d.AllocPinned(int64(n))
			if err != nil {
				return nil, err
			}
			pinned = append(pinned, b)
			return unsafe.Slice((*byte)(b.Host), n), nil
		},
	}
	total := layout.StoredBytes()
	fill := newArenaFiller(layout, func(hostLayer int, dst int64, src []byte) error {
		if hostLayer >= 0 {
			h := dw.Host[hostLayer]
			copy(unsafe.Slice((*byte)(h.Host), h.Bytes)[dst:], src)
			return nil
		}
		return d.Do(func() error {
			return cu.MemcpyHtoD(cu.DevicePtr(arena.Ptr+uintptr(dst)), unsafe.Pointer(&src[0]), int64(len(src)))
		})
	})
	_, err = ix.Load(opts, func(ti checkpoint.TensorInfo, off int64, data []byte) error {
		if err := fill.chunk(ti, off, data); err != nil {
			return err
		}
		if progress != nil {
			progress(fill.done, total)
		}
		return nil
	})
	if err == nil {
		err = fill.check()
	}
	if err != nil {
		return nil, err
	}
	ok = true
	return dw, nil
}
