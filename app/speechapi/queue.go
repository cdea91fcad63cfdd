package speechapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"sync"
)

// queue admits one take at a time and lets at most depth more wait; a request
// beyond that is refused at once (429) rather than piling up. It is fair
// between clients: one client holds at most perClient of the depth+1
// places (half, rounded down, and at least two: a running take and one
// waiting), so a client sending as fast as it can leaves the other half
// to everyone else.
type queue struct {
	slots     chan struct{} // held by the running take and the waiting ones
	run       chan struct{} // held by the running take
	perClient int

	mu   sync.Mutex
	held map[string]int // places held per client
}

func newQueue(depth int) *queue {
	places := depth + 1
	return &queue{slots: make(chan struct{}, places), run: make(chan struct{}, 1),
		perClient: max(places/2, min(2, places)), held: map[string]int{}}
}

// admission is acquire's verdict.
type admission int

const (
	admittedYes        admission = iota
	refusedQueueFull             // every place is held
	refusedClientShare           // the client holds its share already
)

// acquire takes a place in the queue for client and waits for the engine.
// It refuses when the queue is full or the client holds its share; it
// returns ctx's error if the client leaves while waiting. release must be
// called after an admittedYes, nil return.
func (q *queue) acquire(ctx context.Context, client string) (admission, error) {
	q.mu.Lock()
	if q.held[client] >= q.perClient {
		q.mu.Unlock()
		return refusedClientShare, nil
	}
	select {
	case q.slots <- struct{}{}:
		q.held[client]++
	default:
		q.mu.Unlock()
		return refusedQueueFull, nil
	}
	q.mu.Unlock()
	select {
	case q.run <- struct{}{}:
		return admittedYes, nil
	case <-ctx.Done():
		q.leave(client)
		return admittedYes, ctx.Err()
	}
}

func (q *queue) release(client string) {
	<-q.run
	q.leave(client)
}

// leave gives client's place back.
func (q *queue) leave(client string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	<-q.slots
	if q.held[client]--; q.held[client] <= 0 {
		delete(q.held, client)
	}
}

// clientKey names the client a request comes from: its API key (hashed:
// never kept in memory as given) when it sends one, else its address.
func clientKey(r *http.Request) string {
	if key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && key != "" {
		sum := sha256.Sum256([]byte(key))
		return "key:" + hex.EncodeToString(sum[:8])
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "addr:" + host
}
