package server

import (
	"net"
	"net/http"
	"sync"
)

// freshConns follows the connections that have not sent a request yet
// (http.StateNew) so that a shutdown can close them. net/http's Shutdown
// counts such a connection as busy for its first five seconds (Go issue
// 22682), and clients open them ahead of need: browsers preconnect, and Go's
// transport keeps a connection it dialled for a request that another
// connection served first. One of those held Serve's shutdown for its whole
// five seconds and failed it ("context deadline exceeded"). Closing them
// loses nothing: no request has arrived on them.
type freshConns struct {
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closing bool // the shutdown began: a connection accepted now is closed at once
}

func newFreshConns() *freshConns { return &freshConns{conns: map[net.Conn]struct{}{}} }

// state is the server's ConnState hook.
func (f *freshConns) state(c net.Conn, s http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case s != http.StateNew:
		delete(f.conns, c)
	case f.closing:
		c.Close()
	default:
		f.conns[c] = struct{}{}
	}
}

// closeAll closes every connection that has not sent a request, and every
// one accepted from now on (the server's OnShutdown hook).
func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closing = true
	for c := range f.conns {
		c.Close()
	}
	clear(f.conns)
}
