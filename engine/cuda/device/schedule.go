package device

import (
	"fmt"
	"os"
)

// How the device's host thread waits and how its streams are ranked, read
// once from the environment (measurement knobs; the defaults are what the
// product runs).
//
// PROSCENIUM_GPU_SYNC picks how a wait for the device (Sync, an event) waits:
// "blocking" (the default) sleeps in the kernel until the GPU signals, which
// costs a wake-up on every frame but leaves the core to others (the studio
// shares the machine); "spin" busy-waits (lowest latency, one core busy
// while a take runs); "yield" spins but yields the core.
//
// PROSCENIUM_GPU_STREAM_PRIORITY=1 runs the device's main stream (the
// frames, the prefill) at the greatest priority the GPU offers, side streams
// (each take's codec) staying at the default, the least: when both have
// blocks waiting, the multiprocessors take the frame's first, so a codec
// chunk decoded beside the step would fill the gaps instead of delaying the
// step's dependent kernels. Unset or anything else: every stream at the
// default (what the product runs until a measurement says otherwise).
const (
	SyncEnv           = "PROSCENIUM_GPU_SYNC"
	StreamPriorityEnv = "PROSCENIUM_GPU_STREAM_PRIORITY"
)

// SyncMode is how the host waits for the device.
type SyncMode int

const (
	SyncBlocking SyncMode = iota
	SyncSpin
	SyncYield
)

func (m SyncMode) String() string {
	return [...]string{"blocking", "spin", "yield"}[m]
}

// ParseSyncMode reads a PROSCENIUM_GPU_SYNC value ("" is blocking).
func ParseSyncMode(v string) (SyncMode, error) {
	switch v {
	case "", "blocking":
		return SyncBlocking, nil
	case "spin":
		return SyncSpin, nil
	case "yield":
		return SyncYield, nil
	}
	return 0, fmt.Errorf("%s=%q: want blocking, spin or yield", SyncEnv, v)
}

// streamPriorityFromEnv reports whether the main stream gets the greatest
// priority (PROSCENIUM_GPU_STREAM_PRIORITY=1).
func streamPriorityFromEnv() bool { return os.Getenv(StreamPriorityEnv) == "1" }
