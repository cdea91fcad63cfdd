//go:build cuda

package cuda

import (
	"fmt"
	"slices"
)

// The routing log (debugging). A backbone that keeps it (KeepRoutes, before
// its first step) has every step and every prefill pass copy each layer's
// routing of its rows — the router's E logits and the k experts chosen —
// into a buffer of its own (one for steps, one for passes), which
// StepRoutes and PassRoutes read once the stream has passed the work.
// bench-take -near-ties compares a take's routing in a batch with its
// routing alone (its prompt rows, routed in a joint pass and in its own,
// then its steps): where the two chose different experts, the log names the
// row, the layer and the experts, and shows how near the router's logits
// of the swapped experts lay, which the take's output logits cannot tell.

// routeLog is the log: the steps' buffer (MaxStepRows rows) and the prefill
// passes' (Plan.Chunk rows, the rows of the last pass logged in passRows).
type routeLog struct {
	steps, pass *routeBuf
	passRows    int
}

// routeBuf is one device buffer of a routing log, up to rows rows: ids
// [rows][layers][k] int32, then the router's logits [rows][layers][e]
// float32. A row's routing at every layer lies together, so n rows read
// back in two copies; each layer's copy in writes its n rows at that pitch.
type routeBuf struct {
	blk                *Block
	rows, layers, k, e int
	logitsOff          int64
}

func newRouteBuf(d *Device, rows, layers, k, e int) (*routeBuf, error) {
	r := &routeBuf{rows: rows, layers: layers, k: k, e: e, logitsOff: int64(rows * layers * k * 4)}
	var err error
	r.blk, err = d.Alloc(r.logitsOff + int64(rows*layers*e*4))
	return r, err
}

// copyIn enqueues the copy of layer's routing of n rows: ids [n·k], and
// the first e of each row's dw dense outputs (the router's logits).
func (r *routeBuf) copyIn(q *Queue, layer, n int, ids, dense *Block, dw int) error {
	if n > r.rows {
		return fmt.Errorf("backbone: the routing log of %d rows (at most %d)", n, r.rows)
	}
	at := func(off int64) *Block {
		return &Block{Kind: DeviceMem, Ptr: r.blk.Ptr + uintptr(off), Bytes: r.blk.Bytes - off}
	}
	if err := q.CopyRows(at(int64(layer*r.k*4)), ids, n, int64(r.k*4), int64(r.layers*r.k*4), int64(r.k*4)); err != nil {
		return err
	}
	return q.CopyRows(at(r.logitsOff+int64(layer*r.e*4)), dense, n, int64(r.e*4), int64(r.layers*r.e*4), int64(dw*4))
}

// read is the routing of the buffer's first n rows, [row][layer], copied
// out (a caller keeping a row keeps its own e logits a layer, not the log).
func (r *routeBuf) read(d *Device, n int) ([][]StepRoute, error) {
	if n < 1 || n > r.rows {
		return nil, fmt.Errorf("backbone: the routing of %d rows (1…%d logged)", n, r.rows)
	}
	ids := make([]int32, n*r.layers*r.k)
	logits := make([]float32, n*r.layers*r.e)
	if err := firstErr(Download(d, ids, r.blk, 0), Download(d, logits, r.blk, r.logitsOff)); err != nil {
		return nil, err
	}
	out := make([][]StepRoute, n)
	for row := range out {
		out[row] = make([]StepRoute, r.layers)
		for i := range r.layers {
			at := row*r.layers + i
			out[row][i] = StepRoute{Experts: slices.Clone(ids[at*r.k : (at+1)*r.k]), Logits: slices.Clone(logits[at*r.e : (at+1)*r.e])}
		}
	}
	return out, nil
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
	p, layers := b.Plan, len(b.layers)
	steps, err := newRouteBuf(b.d, MaxStepRows, layers, p.K, p.E)
	if err != nil {
		return fmt.Errorf("backbone: the routing log: %w", err)
	}
	pass, err := newRouteBuf(b.d, p.Chunk, layers, p.K, p.E)
	if err != nil {
		b.d.Free(steps.blk)
		return fmt.Errorf("backbone: the routing log of a prefill pass: %w", err)
	}
	b.routes = &routeLog{steps: steps, pass: pass}
	return nil
}

// inPass enqueues a prefill pass of n rows (enqueue): the routing log,
// where kept, logs its rows as that pass's.
func (b *Backbone) inPass(n int, enqueue func() error) error {
	b.passing = true
	defer func() { b.passing = false }()
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
	case l == nil:
		b.unlogged = b.unlogged || !b.passing
		return nil
	case b.passing:
		return l.pass.copyIn(q, layer, n, ids, dense, b.Plan.D)
	}
	return l.steps.copyIn(q, layer, n, ids, dense, b.Plan.D)
}

// PassRoutes is the routing of the last prefill pass's rows, [row][layer]
// (the pass's rows in order), read from the log (KeepRoutes).
func (b *Backbone) PassRoutes() ([][]StepRoute, error) {
	l := b.routes
	if l == nil {
		return nil, fmt.Errorf("backbone: no routing log kept")
	}
	if l.passRows == 0 {
		return nil, fmt.Errorf("backbone: no prefill pass logged")
	}
	return l.pass.read(b.d, l.passRows)
}

// StepRoutes is the routing of the last step's n rows, [row][layer], read
// from the log (KeepRoutes) after the stream has passed that step.
func (b *Backbone) StepRoutes(n int) ([][]StepRoute, error) {
	if b.routes == nil {
		return nil, fmt.Errorf("backbone: no routing log kept")
	}
	return b.routes.steps.read(b.d, n)
}

// closeRoutes frees the log.
func (b *Backbone) closeRoutes() {
	if b.routes != nil {
		b.d.Free(b.routes.steps.blk)
		b.d.Free(b.routes.pass.blk)
		b.routes = nil
	}
}
