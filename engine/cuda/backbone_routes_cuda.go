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
// A prefill pass is not logged (only steps: one row, or a B-row step).

// routeLog is the log's device buffer: ids [layers][MaxStepRows][K] int32,
// then the stacked dense projection's outputs [layers][MaxStepRows][D]
// float32 (the router's logits are each row's first E).
type routeLog struct {
	buf         *Block
	idsBytes    int64 // the ids' part
	rows, k, dw int   // rows a layer, experts a row, dense outputs a row
}

// KeepRoutes makes every step enqueued from now on log its routing
// (StepRoutes). It fails once a step was enqueued without it: a graph
// captured then (the backbone's, a frame's, a take set's) would not log.
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
	b.routes = l
	return nil
}

// logRoutes enqueues the copy of layer's routing of a step's n rows (ids
// [n·K], dense [n·D]) into the log, where one is kept (else it notes a
// step enqueued without it).
func (b *Backbone) logRoutes(q *Queue, layer, n int, ids, dense *Block) error {
	l := b.routes
	if l == nil {
		b.unlogged = true
		return nil
	}
	at := func(off int64, bytes int) *Block {
		return &Block{Kind: DeviceMem, Ptr: l.buf.Ptr + uintptr(off), Bytes: int64(bytes)}
	}
	if err := q.Copy(at(int64(layer*l.rows*l.k*4), n*l.k*4), ids, int64(n*l.k*4)); err != nil {
		return err
	}
	return q.Copy(at(l.idsBytes+int64(layer*l.rows*l.dw*4), n*l.dw*4), dense, int64(n*l.dw*4))
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
		b.routes = nil
	}
}
