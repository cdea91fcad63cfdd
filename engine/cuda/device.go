package cuda

import "proscenium/engine/cuda/device"

// The device layer's types as the model uses them (package device owns
// them: the context and stream, the memory pool, graphs, timing).

// Block is a pool allocation (device.Block).
type Block = device.Block

// Memory kinds of a Block.
const (
	DeviceMem   = device.DeviceMem
	PinnedMem   = device.PinnedMem
	HostTierMem = device.HostTierMem // pinned host memory of a host tier: experts, voice snapshots (TierHostExperts)
)

// ErrOverCap and DefaultHeadroom are the pool's (the memory tier's
// arithmetic uses them).
var ErrOverCap = device.ErrOverCap

const DefaultHeadroom = device.DefaultHeadroom

// checkFits and firstErr are device.CheckFits and device.FirstErr, which
// every launch helper calls.
var (
	checkFits = device.CheckFits
	firstErr  = device.FirstErr
)
