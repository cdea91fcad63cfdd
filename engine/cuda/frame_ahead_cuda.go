//go:build cuda

package cuda

import (
	"os"

	"gorgonia.org/cu"
)

// Two frames in flight (FramesOptions.Ahead2). With one frame launched
// ahead (Pipeline), frame N+1's graph is launched once frame N's codes are
// read: between the two graphs the device waits for the host to wake, read
// the result and launch. With two, Frame launches N+1 before it waits for
// N, so the stream holds N+1 when N ends. The frames then alternate two
// result buffers in pinned memory (frame N+1's copy would otherwise land on
// N's result before the host reads it), two captured step graphs (each
// copies into its own buffer) and two events (Frame waits for its frame's
// event, not for the stream, which already holds the next frame). Nothing
// else changes between frames: the feedback row, positions and counters
// live on the device. A take that ends at frame N has launched N+1 too:
// its rows go into the take's caches past its end and are never read
// (settle waits for it before the next Begin).

// framesAheadEnv is $PROSCENIUM_GPU_FRAMES_AHEAD: "1" keeps one frame in
// flight (FramesOptions.Ahead2 off) at every load, anything else two (the
// default since session 11's run 1b: real-time factor 0.0708 against
// 0.0719, four takes 31.4 against 31.1 audio s per s; docs/PERF.md).
var framesAheadEnv = os.Getenv("PROSCENIUM_GPU_FRAMES_AHEAD")

// frameAhead is what Ahead2 adds to a Frames: the odd frames' result buffer
// and step graph, and each parity's event.
type frameAhead struct {
	on     bool
	pinned *Block // FrameResultBytes: odd frames' results
	next   *Graph // odd frames' step graph (copies into pinned)
	done   eventPair
}

// eventPair is the events of two frames (steps) in flight, one a parity:
// the stream records one after its frame's graph, and the host waits for
// that frame alone by it.
type eventPair struct {
	ev   [2]cu.Event
	made int // events made (destroy gives back these)
}

// make makes both events (none on failure).
func (p *eventPair) make(d *Device) error {
	err := d.Do(func() error {
		for p.made < len(p.ev) {
			e, err := cu.MakeEvent(cu.DisableTiming)
			if err != nil {
				return err
			}
			p.ev[p.made] = e
			p.made++
		}
		return nil
	})
	if err != nil {
		p.destroy(d)
	}
	return err
}

// destroy gives back the events made.
func (p *eventPair) destroy(d *Device) {
	if p.made == 0 {
		return
	}
	d.Do(func() error {
		for i := 0; i < p.made; i++ {
			cu.DestroyEvent(&p.ev[i])
		}
		return nil
	})
	p.made = 0
}

// record enqueues parity i's event on q (inside Run).
func (p *eventPair) record(q *Queue, i int) error { return p.ev[i&1].Record(q.Stream()) }

// wait returns once the stream has passed parity i's event, with the first
// error the stream met.
func (p *eventPair) wait(d *Device, i int) error {
	return d.Do(func() error { return p.ev[i&1].Synchronize() })
}

// alloc makes the odd frames' buffer and both events.
func (a *frameAhead) alloc(d *Device) error {
	var err error
	if a.pinned, err = d.AllocPinned(FrameResultBytes); err != nil {
		return err
	}
	if err := a.done.make(d); err != nil {
		d.Free(a.pinned)
		a.pinned = nil
		return err
	}
	a.on = true
	return nil
}

// record enqueues frame k's event after its graph (q: the device's stream,
// inside Run); nothing without Ahead2.
func (a *frameAhead) record(q *Queue, k int) error {
	if !a.on {
		return nil
	}
	return a.done.record(q, k)
}

// free gives back the buffer and the events (the graph is Close's).
func (a *frameAhead) free(d *Device) {
	if a.pinned != nil {
		d.Free(a.pinned)
		a.pinned = nil
	}
	a.done.destroy(d)
	a.on = false
}

// aheadOn reports whether Frame launches a second frame ahead now: Ahead2
// at the load, the pipeline on and no logits tap (teacher forcing is
// checked by Frame), and no host expert tier, whose cache ticks between
// frames on what the last frame used.
func (f *Frames) aheadOn() bool {
	return f.ahead.on && f.opt.Pipeline && f.tap == nil && f.bb.W.Cache == nil
}

// resultBuffer is where frame k's result lands: odd frames' in the second
// buffer under Ahead2.
func (f *Frames) resultBuffer(k int) *Block {
	if f.ahead.on && k&1 == 1 {
		return f.ahead.pinned
	}
	return f.pinned
}

// stepGraph is frame k's step graph (k > 0): odd frames' the second under
// Ahead2.
func (f *Frames) stepGraph(k int) **Graph {
	if f.ahead.on && k&1 == 1 {
		return &f.ahead.next
	}
	return &f.next
}

// waitFrame waits until the stream has passed frame k's graph (and its
// copy) and returns the first error the stream met: under Ahead2 by the
// frame's event, leaving the frame after it running; else the stream.
func (f *Frames) waitFrame(k int) error {
	if !f.ahead.on {
		return f.d.Sync()
	}
	return f.ahead.done.wait(f.d, k)
}

// FramesAhead is the frames a take keeps in flight now: 0 (no pipeline),
// 1 (Pipeline) or 2 (Ahead2).
func (f *Frames) FramesAhead() int {
	switch {
	case f.aheadOn():
		return 2
	case f.opt.Pipeline:
		return 1
	}
	return 0
}
