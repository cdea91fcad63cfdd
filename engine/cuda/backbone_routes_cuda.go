//go:build cuda

package cuda

import (
	"fmt"
	"slices"
)

// The routing log (debugging). A backbone that keeps it (KeepRoutes, before
// its first step) has every step copy each layer's routing of its
// rows — the router's E logits and the k experts chosen — into a buffer of
// its own, which StepRoutes reads once the stream has passed the step.
// bench-take -near-ties compares a take's routing in a batch with its
// routing alone: where the two chose different experts, the log names the
// step, the layer and the experts, and shows how near the router's logits
// of the swapped experts lay, which the take's output logits cannot tell.
// A prefill pass (Prefill, PrefillOnDevice, PrefillSlots) logs its rows'
// routing into a second buffer, which PassRoutes reads after the pass, so a
// take's prompt rows, routed alone and in a joint pass, compare the same way.

// routeLog is the log's device buffers. buf: a step's ids
// [layers][MaxStepRows][K] int32, then the stacked dense projection's
// outputs [layers][MaxStepRows][D] float32 (the router's logits are each
// row's first E). pass: a prefill pass's ids [layers][Chunk][K], then its
// router logits alone [layers][Chunk][E] (a pass's rows are many: the rest
// of the dense outputs is not kept).
type routeLog struct {
	buf         *Block
	idsBytes    int64 // the ids' part
	rows, k, dw int   // rows a layer, experts a row, dense outputs a row
	pass        *Block
	passIds     int64 // the pass ids' part
	passCap, e  int   // rows a pass, router logits a row
	passRows    int   // rows of the last pass logged (PassRoutes)
}

// KeepRoutes makes every step and prefill pass enqueued from now on log
// its routing (StepRoutes, PassRoutes). It fails once a step was enqueued
// without it: a graph captured then (the backbone's, a frame's, a take
// set's) would not log.
func (b *Backbone) KeepRoutes() error {
	if b.routes != nil {
		return nil
	}
	if b.unlogged {
		return fmt.Errorf("backbone: the routing log must be kept before the first step")
	}
	p := b.Plan
	l := &routeLog{rows: MaxStepRows, k: p.K, dw: p.D}
	l.idsBytes = int64(len(b.layers) * l.rows * l.k * 4)
	buf, err := b.d.Alloc(l.idsBytes + int64(len(b.layers)*l.rows*l.dw*4))
	if err != nil {
		return fmt.Errorf("backbone: the routing log: %w", err)
	}
	l.buf = buf
	l.passCap, l.e = p.Chunk, p.E
	l.passIds = int64(len(b.layers) * l.passCap * l.k * 4)
	if l.pass, err = b.d.Alloc(l.passIds + int64(len(b.layers)*l.passCap*l.e*4)); err != nil {
		b.d.Free(buf)
		return fmt.Errorf("backbone: the routing log of a prefill pass: %w", err)
	}
	b.routes = l
	return nil
}

// inPass enqueues a prefill pass of n rows (enqueue): the routing log,
// where kept, logs its rows as that pass's.
func (b *Backbone) inPass(n int, enqueue func() error) error {
	b.passing = n
	defer func() { b.passing = 0 }()
	if err := enqueue(); err != nil {
		return err
	}
	if b.routes != nil {
		b.routes.passRows = n
	}
	return nil
}

// logRoutes enqueues the copy of layer's routing of n rows (ids [n·K],
// dense [n·D]) into the log, where one is kept: a step's, or within inPass
// a prefill pass's (else it notes a step enqueued without it).
func (b *Backbone) logRoutes(q *Queue, layer, n int, ids, dense *Block) error {
	l := b.routes
	switch {
	case l == nil && b.passing == 0:
		b.unlogged = true
		return nil
	case l == nil:
		return nil
	case b.passing > 0:
		return l.logPass(q, layer, n, ids, dense)
	case n > l.rows:
		return fmt.Errorf("backbone: the routing log of a step of %d rows (at most %d)", n, l.rows)
	}
	at := func(off int64, bytes int) *Block {
		return &Block{Kind: DeviceMem, Ptr: l.buf.Ptr + uintptr(off), Bytes: int64(bytes)}
	}
	if err := q.Copy(at(int64(layer*l.rows*l.k*4), n*l.k*4), ids, int64(n*l.k*4)); err != nil {
		return err
	}
	return q.Copy(at(l.idsBytes+int64(layer*l.rows*l.dw*4), n*l.dw*4), dense, int64(n*l.dw*4))
}

// logPass enqueues the copy of layer's routing of a prefill pass's n rows:
// the ids whole, each row's first E dense outputs (the router's logits).
func (l *routeLog) logPass(q *Queue, layer, n int, ids, dense *Block) error {
	if n > l.passCap {
		return fmt.Errorf("backbone: the routing log of a pass of %d rows (at most %d)", n, l.passCap)
	}
	at := func(off int64, bytes int) *Block {
		return &Block{Kind: DeviceMem, Ptr: l.pass.Ptr + uintptr(off), Bytes: int64(bytes)}
	}
	if err := q.Copy(at(int64(layer*l.passCap*l.k*4), n*l.k*4), ids, int64(n*l.k*4)); err != nil {
		return err
	}
	return q.CopyRows(at(l.passIds+int64(layer*l.passCap*l.e*4), n*l.e*4), dense, n, int64(l.e*4), int64(l.e*4), int64(l.dw*4))
}

// PassRoutes is the routing of the last prefill pass's rows, [row][layer]
// (the pass's rows in order), read from the log (KeepRoutes).
func (b *Backbone) PassRoutes() ([][]StepRoute, error) {
	l := b.routes
	if l == nil {
		return nil, fmt.Errorf("backbone: no routing log kept")
	}
	n, layers := l.passRows, len(b.layers)
	if n == 0 {
		return nil, fmt.Errorf("backbone: no prefill pass logged")
	}
	out := make([][]StepRoute, n)
	for r := range out {
		out[r] = make([]StepRoute, layers)
	}
	ids := make([]int32, n*l.k)
	logits := make([]float32, n*l.e)
	for i := range layers {
		if err := Download(b.d, ids, l.pass, int64(i*l.passCap*l.k*4)); err != nil {
			return nil, err
		}
		if err := Download(b.d, logits, l.pass, l.passIds+int64(i*l.passCap*l.e*4)); err != nil {
			return nil, err
		}
		for r := range n {
			out[r][i] = StepRoute{Experts: slices.Clone(ids[r*l.k : (r+1)*l.k]), Logits: slices.Clone(logits[r*l.e : (r+1)*l.e])}
		}
	}
	return out, nil
}

// StepRoutes is the routing of the last step's n rows, [row][layer], read
// from the log (KeepRoutes) after the stream has passed that step.
func (b *Backbone) StepRoutes(n int) ([][]StepRoute, error) {
	l := b.routes
	if l == nil {
		return nil, fmt.Errorf("backbone: no routing log kept")
	}
	if n < 1 || n > l.rows {
		return nil, fmt.Errorf("backbone: the routing of %d rows (1…%d logged)", n, l.rows)
	}
	layers := len(b.layers)
	ids := make([]int32, layers*l.rows*l.k)
	dense := make([]float32, layers*l.rows*l.dw)
	if err := Download(b.d, ids, l.buf, 0); err != nil {
		return nil, err
	}
	if err := Download(b.d, dense, l.buf, l.idsBytes); err != nil {
		return nil, err
	}
	E := b.Plan.E
	out := make([][]StepRoute, n)
	for r := range out {
		out[r] = make([]StepRoute, layers)
		for i := range layers {
			at := i*l.rows + r
			// Copies: a caller keeping them keeps E logits a layer, not the log.
			out[r][i] = StepRoute{Experts: slices.Clone(ids[at*l.k : (at+1)*l.k]), Logits: slices.Clone(dense[at*l.dw : at*l.dw+E])}
		}
	}
	return out, nil
}

// closeRoutes frees the log.
func (b *Backbone) closeRoutes() {
	if b.routes != nil {
		b.d.Free(b.routes.buf)
		b.d.Free(b.routes.pass)
		b.routes = nil
	}
}
