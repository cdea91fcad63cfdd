package server

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// This file bounds the open connections (ServeLimits.MaxConns) without
// letting idle ones lock out new requests: a kept-alive connection between
// requests holds a slot only while the server has slots to spare. When the
// cap is reached, Accept closes the connection idle the longest to make
// room; and once three quarters of the slots are taken, a connection that
// falls idle is closed after busyIdleTimeout instead of the full idle
// timeout. A flood of idle sockets (64 that each sent one GET /healthz) then
// costs a new client nothing; connections busy with a request are never
// closed for room, and a server full of those makes the next wait, as the
// kernel's backlog does.

// busyIdleTimeout is how long a connection may stay idle while the server
// is busy (idle connections otherwise keep ServeLimits.IdleTimeout).
const busyIdleTimeout = 2 * time.Second

// connSlots is the table of open connections of one listener.
type connSlots struct {
	max  int
	sem  chan struct{} // one token per open connection
	idle chan struct{} // a connection fell idle: an Accept waiting may evict it

	mu    sync.Mutex
	conns map[*slotConn]struct{}
}

// slotConn is an accepted connection holding a slot until it is closed.
type slotConn struct {
	net.Conn
	slots *connSlots

	once      sync.Once
	idleSince time.Time // zero while not idle (guarded by slots.mu)
	timer     *time.Timer
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.slots.mu.Lock()
		delete(c.slots.conns, c)
		if c.timer != nil {
			c.timer.Stop()
		}
		c.slots.mu.Unlock()
		<-c.slots.sem
	})
	return err
}

// slotListener is a listener whose Accept takes a slot first.
type slotListener struct {
	net.Listener
	slots  *connSlots
	closed chan struct{}
	once   sync.Once
}

// limitConns wraps ln to hold at most max connections open, and returns
// the http.Server.ConnState hook that tells it which are idle.
func limitConns(ln net.Listener, max int) (net.Listener, func(net.Conn, http.ConnState)) {
	s := &connSlots{max: max, sem: make(chan struct{}, max), idle: make(chan struct{}, 1), conns: map[*slotConn]struct{}{}}
	return &slotListener{Listener: ln, slots: s, closed: make(chan struct{})}, s.connState
}

func (l *slotListener) Accept() (net.Conn, error) {
	for {
		select {
		case l.slots.sem <- struct{}{}:
			c, err := l.Listener.Accept()
			if err != nil {
				<-l.slots.sem
				return nil, err
			}
			sc := &slotConn{Conn: c, slots: l.slots}
			l.slots.mu.Lock()
			l.slots.conns[sc] = struct{}{}
			l.slots.mu.Unlock()
			return sc, nil
		case <-l.closed:
			return nil, net.ErrClosed
		default:
		}
		// Full: make room by closing the connection idle the longest, or
		// wait for a slot or for a connection to fall idle.
		if l.slots.evictIdle() {
			continue
		}
		select {
		case l.slots.sem <- struct{}{}:
			<-l.slots.sem // taken back at the top of the loop
		case <-l.slots.idle:
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
}

func (l *slotListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// evictIdle closes the connection idle the longest; false if none is.
func (s *connSlots) evictIdle() bool {
	s.mu.Lock()
	var oldest *slotConn
	for c := range s.conns {
		if !c.idleSince.IsZero() && (oldest == nil || c.idleSince.Before(oldest.idleSince)) {
			oldest = c
		}
	}
	s.mu.Unlock()
	if oldest == nil {
		return false
	}
	oldest.Close()
	return true
}

// connState follows the server's connections: an idle one is marked (and,
// while the server is busy, closed after busyIdleTimeout); one that starts
// a request is unmarked.
func (s *connSlots) connState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*slotConn)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if state != http.StateIdle {
		c.idleSince = time.Time{}
		return
	}
	c.idleSince = time.Now()
	if len(s.sem)*4 >= s.max*3 {
		c.timer = time.AfterFunc(busyIdleTimeout, func() { c.Close() })
	}
	select {
	case s.idle <- struct{}{}:
	default:
	}
}
