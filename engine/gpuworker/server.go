package gpuworker

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"proscenium/engine/api"
)

// Handler serves one request in the worker. It sends progress through out
// and returns the result (marshalled to JSON) or an error. ctx is cancelled
// when the client cancels the request or goes away.
type Handler func(ctx context.Context, req Request, out *Emitter) (any, error)

// Emitter sends one request's events and PCM to the client.
type Emitter struct {
	s  *server
	id uint64
}

// Event reports the frames made so far.
func (e *Emitter) Event(frames int) error {
	b, _ := json.Marshal(Event{ID: e.id, Frames: frames})
	return e.s.write(FrameEvent, b)
}

// Load reports a load's progress in bytes.
func (e *Emitter) Load(done, total int64) error {
	b, _ := json.Marshal(Event{ID: e.id, Load: &LoadProgress{Done: done, Total: total}})
	return e.s.write(FrameEvent, b)
}

// PCM sends a decoded chunk.
func (e *Emitter) PCM(c api.AudioChunk) error {
	return e.s.write(FramePCM, EncodePCM(PCM{ID: e.id, Chunk: c}))
}

type server struct {
	wmu sync.Mutex
	out io.Writer
}

func (s *server) write(t FrameType, b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return WriteFrame(s.out, t, b)
}

// Serve is the worker's loop: it writes Magic and hello, then serves requests
// from in, each on its own goroutine, until in ends (the client closed it or
// died); then it cancels what still runs, waits for it, and returns nil.
func Serve(in io.Reader, out io.Writer, hello Hello, h Handler) error {
	s := &server{out: out}
	hello.Protocol = ProtocolVersion
	if _, err := io.WriteString(out, Magic); err != nil {
		return err
	}
	hb, err := json.Marshal(hello)
	if err != nil {
		return err
	}
	if err := s.write(FrameHello, hb); err != nil {
		return err
	}
	var (
		mu      sync.Mutex
		cancels = map[uint64]context.CancelFunc{}
		wg      sync.WaitGroup
	)
	defer func() {
		mu.Lock()
		for _, c := range cancels {
			c()
		}
		mu.Unlock()
		wg.Wait()
	}()
	for {
		t, payload, err := ReadFrame(in)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("gpuworker: reading requests: %w", err)
		}
		switch t {
		case FrameRequest:
			var req Request
			if err := json.Unmarshal(payload, &req); err != nil {
				return fmt.Errorf("gpuworker: request: %v: %w", err, ErrFrame)
			}
			ctx, cancel := context.WithCancel(context.Background())
			mu.Lock()
			if _, dup := cancels[req.ID]; dup {
				mu.Unlock()
				cancel()
				return fmt.Errorf("gpuworker: request id %d already running: %w", req.ID, ErrFrame)
			}
			cancels[req.ID] = cancel
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				rep := Reply{ID: req.ID}
				res, err := safeHandle(ctx, h, req, &Emitter{s: s, id: req.ID})
				if err == nil {
					rep.Result, err = json.Marshal(res)
				}
				if err != nil {
					rep.Error, rep.Kind = err.Error(), kindOf(err)
				}
				mu.Lock()
				delete(cancels, req.ID)
				mu.Unlock()
				cancel()
				b, _ := json.Marshal(rep)
				s.write(FrameReply, b)
			}()
		case FrameCancel:
			if len(payload) != 8 {
				return fmt.Errorf("gpuworker: cancel payload of %d bytes: %w", len(payload), ErrFrame)
			}
			id := binary.LittleEndian.Uint64(payload)
			mu.Lock()
			if c, ok := cancels[id]; ok {
				c()
			}
			mu.Unlock()
		default:
			return fmt.Errorf("gpuworker: the client sent a %s frame: %w", t, ErrFrame)
		}
	}
}

// safeHandle turns a handler's panic into the request's error: one bad
// request must not end the worker and every other take with it.
func safeHandle(ctx context.Context, h Handler, req Request, out *Emitter) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("worker panic serving %s: %v", req.Op, p)
		}
	}()
	return h(ctx, req, out)
}
