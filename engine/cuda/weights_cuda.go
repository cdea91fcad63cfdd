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
// out by LayoutWeights, and what the layout puts in host memory
// (LayoutWeightsTier): the routed experts of the last layers in pinned
// blocks, one per layer, and the sparse-read dense tensors in one more.
type DeviceWeights struct {
	Arena   *Block
	Layout  *WeightLayout
	Weights *drama3.Weights
	// Host is, per layer, its experts' pinned block (nil: in the arena),
	// and HostDevice the same memory as the kernels address it.
	Host       []*Block
	HostDevice []*Block
	// HostDense is the pinned block of the dense tensors in host memory
	// (nil: none), HostDenseDevice the same as the kernels address it.
	HostDense       *Block
	HostDenseDevice *Block
	// Stage is the device buffer a prefill streams a host layer's experts
	// through (TierPlan.Stage; nil when every expert is on the device).
	// Between passes it holds the home layer's experts whole (the last host
	// layer: a pass streams the host layers in order and ends with it),
	// which decode steps read from it; stageLayer is the layer whose experts
	// the work enqueued so far leaves there (-1: none), stageHas which of
	// them (expert_stage_cuda.go).
	Stage      *Block
	home       int
	stageLayer int
	stageHas   []bool
	// StagedBytes counts the bytes copied onto the stage since the load:
	// what the prefill passes carried over the bus.
	StagedBytes int64
	// Tier is where the load put the model's bytes (PlanTier).
	Tier TierPlan
	// Cache is the expert cache of a host tier (nil: none), started with
	// the first backbone on the weights.
	Cache *ExpertCache
}

// Experts is the block layer i's expert kernels read as laid out, at
// the offsets of Layout.Experts[i]: the arena, the stage for the home
// layer, or the layer's pinned host block as the device addresses it (the
// kernels read it over the bus).
func (w *DeviceWeights) Experts(i int) *Block {
	if w.Stage != nil && i == w.home {
		return w.Stage
	}
	if i < len(w.HostDevice) && w.HostDevice[i] != nil {
		return w.HostDevice[i]
	}
	return w.Arena
}

// AllocHostExperts takes, for w's layout, a pinned block for every host
// layer's experts and one for the dense tensors in host memory, cleared
// (the padding of packed experts must read as zero), their device
// addresses, and the device stage a prefill streams the experts through
// (none without host layers), into w.Host, w.HostDevice, w.HostDense,
// w.HostDenseDevice and w.Stage. On failure nothing of them stays
// allocated.
func (d *Device) AllocHostExperts(w *DeviceWeights) (err error) {
	layout := w.Layout
	host, dev := make([]*Block, len(layout.Experts)), make([]*Block, len(layout.Experts))
	var stage, dense, denseDev *Block
	home := -1
	defer func() {
		if err != nil {
			freeBlocks(d, append(host, stage, dense))
			return
		}
		w.Host, w.HostDevice, w.Stage, w.HostDense, w.HostDenseDevice = host, dev, stage, dense, denseDev
		w.home, w.stageLayer = home, -1
	}()
	// pin takes a cleared pinned block of n bytes and its device view (for
	// the launches, as the backbone's scratch views are: never freed itself).
	pin := func(n int64, what string) (*Block, *Block, error) {
		var b *Block
		if err := d.Do(func() (err error) { b, err = d.Pool.Alloc(HostTierMem, n); return }); err != nil {
			return nil, nil, fmt.Errorf("gpu weights: %s in host memory: %w", what, err)
		}
		clear(unsafe.Slice((*byte)(b.Host), b.Bytes))
		var ptr uintptr
		if err := d.Do(func() (err error) { ptr, err = device.HostDevicePointer(b.Host); return }); err != nil {
			return b, nil, fmt.Errorf("gpu weights: %s in host memory: %w", what, err)
		}
		return b, &Block{Kind: DeviceMem, Ptr: ptr, Bytes: b.Bytes}, nil
	}
	if layout.HostDenseBytes > 0 {
		if dense, denseDev, err = pin(layout.HostDenseBytes, "the token embedding"); err != nil {
			return err
		}
	}
	var span int64
	for i, x := range layout.Experts {
		if x.Host {
			span = max(span, x.SpanBytes())
			home = i
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
		if host[i], dev[i], err = pin(x.SpanBytes(), fmt.Sprintf("layer %d's experts", i)); err != nil {
			return err
		}
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
	return Tensor{Block: w.Block(t), Off: t.Off}, nil
}

// Block is the block t's offset is in as the kernels address it: the arena,
// or the host block of dense tensors.
func (w *DeviceWeights) Block(t DeviceTensor) *Block {
	if t.Host {
		return w.HostDenseDevice
	}
	return w.Arena
}

// Free gives the arena, the host blocks, the stage and the expert cache back.
func (w *DeviceWeights) Free(d *Device) error {
	if w.Cache != nil {
		w.Cache.free()
		w.Cache = nil
	}
	freeBlocks(d, append(w.Host, w.Stage, w.HostDense))
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
		if hostLayer >= 0 || hostLayer == hostDenseBlock {
			h := dw.HostDense
			if hostLayer >= 0 {
				h = dw.Host[hostLayer]
			}
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
