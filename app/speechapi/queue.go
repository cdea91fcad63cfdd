package speechapi

import "context"

// queue admits batch takes at a time (the engine runs them together) and
// lets at most depth more wait; a request beyond that is refused at once
// (429) rather than piling up.
type queue struct {
	slots chan struct{} // held by the running takes and the waiting ones
	run   chan struct{} // held by the running takes
}

func newQueue(depth, batch int) *queue {
	return &queue{slots: make(chan struct{}, depth+batch), run: make(chan struct{}, batch)}
}

// acquire takes a place in the queue and waits for the engine. It reports
// false when the queue is full; it returns ctx's error if the client leaves
// while waiting. release must be called after a true, nil return.
func (q *queue) acquire(ctx context.Context) (bool, error) {
	select {
	case q.slots <- struct{}{}:
	default:
		return false, nil
	}
	select {
	case q.run <- struct{}{}:
		return true, nil
	case <-ctx.Done():
		<-q.slots
		return true, ctx.Err()
	}
}

func (q *queue) release() {
	<-q.run
	<-q.slots
}
