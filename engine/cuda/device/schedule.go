package device

import (
	"fmt"
	"os"
)

// How the device's host thread waits and how its streams are ranked, read
// once from the environment (measurement knobs; the defaults are what the
// product runs).
//
// PROSCENIUM_GPU_SYNC picks how a wait for the device (Sync, an event)
// waits: "yield" (the default) polls the GPU and yields the core between
// polls, so the host sees a frame's end within microseconds while other
// threads still get the core; "spin" polls without yielding; "blocking"
// sleeps in the kernel until the GPU's interrupt wakes it, which leaves the
// core idle but costs a wake-up on every frame: on the H200 a take's frame
// took 0.18 ms longer (session 10 run 2: real-time factor 0.0763 blocking
// against 0.0724 yield and 0.0726 spin, medians of five takes, 3.35 against
// 3.17 ms a frame in the loop). The price of yield: one core busy while the
// worker waits for a take's frames (not while it is idle).
//
// The device's main stream (the frames, the prefill) runs at the greatest
// priority the GPU offers, side streams (each take's codec) at the default,
// the least: when both have blocks waiting, the multiprocessors take the
// frame's first, and a codec chunk decoded beside the step fills the gaps
// instead of delaying the step's dependent kernels. Session 10 run 4
// (yielding waits, medians of five takes): a take's real-time factor 0.0718
// against 0.0725 without, four takes at once 31.4 against 30.7 audio seconds
// a second. PROSCENIUM_GPU_STREAM_PRIORITY=0 leaves every stream at the
// default.
const (
	SyncEnv           = "PROSCENIUM_GPU_SYNC"
	StreamPriorityEnv = "PROSCENIUM_GPU_STREAM_PRIORITY"
)

// SyncMode is how the host waits for the device.
type SyncMode int

const (
	SyncYield SyncMode = iota
	SyncSpin
	SyncBlocking
)

func (m SyncMode) String() string {
	return [...]string{"yield", "spin", "blocking"}[m]
}

// ParseSyncMode reads a PROSCENIUM_GPU_SYNC value ("" is yield).
func ParseSyncMode(v string) (SyncMode, error) {
	switch v {
	case "", "yield":
		return SyncYield, nil
	case "spin":
		return SyncSpin, nil
	case "blocking":
		return SyncBlocking, nil
	}
	return 0, fmt.Errorf("%s=%q: want blocking, spin or yield", SyncEnv, v)
}

// streamPriorityFromEnv reports whether the main stream gets the greatest
// priority (PROSCENIUM_GPU_STREAM_PRIORITY unset or anything but "0").
func streamPriorityFromEnv() bool { return os.Getenv(StreamPriorityEnv) != "0" }
