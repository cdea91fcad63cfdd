package cuda

import "proscenium/engine/cuda/device"

// The device layer's types as the model uses them (package device owns
// them: the context and stream, the memory pool, graphs, timing).

// Block is a pool allocation (device.Block).
type Block = device.Block

// Memory kinds of a Block.
const (
	DeviceMem = device.DeviceMem
	PinnedMem = device.PinnedMem
)

// checkFits and firstErr are device.CheckFits and device.FirstErr, which
// every launch helper calls.
var (
	checkFits = device.CheckFits
	firstErr  = device.FirstErr
)
