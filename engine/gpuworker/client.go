package gpuworker

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// UnavailableError says why the GPU backend could not start: the worker is
// missing, or it ran and reported (or printed) why it could not open a GPU.
type UnavailableError struct {
	Reason string // one line for the UI
	Detail string // what the worker printed, trimmed
}

func (e *UnavailableError) Error() string {
	if e.Detail == "" || e.Detail == e.Reason {
		return "GPU backend unavailable: " + e.Reason
	}
	return "GPU backend unavailable: " + e.Reason + " (worker said: " + e.Detail + ")"
}

// WorkerDiedError ends the requests in flight when the worker process ends.
type WorkerDiedError struct {
	Worker string // the worker's binary and arguments
	PID    int
	Status string // the process's exit status
	Stderr string // the end of what it wrote to stderr
}

func (e *WorkerDiedError) Error() string {
	s := fmt.Sprintf("engine worker %s (pid %d) died (%s)", e.Worker, e.PID, e.Status)
	if e.Stderr != "" {
		s += ": " + e.Stderr
	}
	return s
}

// RemoteError is a request's own error, as the worker reported it. An error
// of one of the engine's kinds (api.ErrInvalidRequest) reads as the
// engine wrote it and unwraps to its sentinel: running the engine in a worker
// changes no message the user sees.
type RemoteError struct{ Op, Message, Kind string }

func (e *RemoteError) Error() string {
	if e.Kind != "" {
		return e.Message
	}
	return "engine worker: " + e.Op + ": " + e.Message
}

// Unwrap returns the engine's sentinel error of Kind, if any.
func (e *RemoteError) Unwrap() error { return errorKinds[e.Kind] }

// Options tune Start.
type Options struct {
	Args         []string
	Env          []string      // extra environment, KEY=VALUE
	HelloTimeout time.Duration // 0: 2 minutes (context and module load)
	CancelGrace  time.Duration // how long a cancelled call waits for its reply; 0: 10 s
}

// Client is a running worker. Its methods are safe for concurrent use.
type Client struct {
	hello  Hello
	name   string // the worker's command line, for errors
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tailBuffer
	grace  time.Duration

	wmu sync.Mutex

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]*call

	done    chan struct{} // closed once the worker is gone
	diedErr error         // set before done is closed
}

// call is one request in flight. The reader goroutine only queues what
// arrives for it (events, PCM, then the reply); Call drains the queue on the
// caller's goroutine, so a slow or blocking callback delays only its own
// call, never the reader and the other calls' replies.
type call struct {
	mu     sync.Mutex
	queue  []message
	closed bool          // the worker is gone: nothing more will be queued
	ready  chan struct{} // capacity 1: something was queued or closed
}

// message is one frame for a call: exactly one field is set.
type message struct {
	event *Event
	pcm   *PCM
	reply *Reply
}

func newCall() *call { return &call{ready: make(chan struct{}, 1)} }

func (cl *call) push(m message) {
	cl.mu.Lock()
	cl.queue = append(cl.queue, m)
	cl.mu.Unlock()
	cl.signal()
}

func (cl *call) close() {
	cl.mu.Lock()
	cl.closed = true
	cl.mu.Unlock()
	cl.signal()
}

func (cl *call) signal() {
	select {
	case cl.ready <- struct{}{}:
	default:
	}
}

// take returns what was queued and whether the worker is gone.
func (cl *call) take() ([]message, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	q := cl.queue
	cl.queue = nil
	return q, cl.closed
}

// Start runs the worker at path and waits for its hello. If it prints
// something else first or exits, that text is the UnavailableError's detail.
func Start(ctx context.Context, path string, opt Options) (*Client, error) {
	cmd := exec.Command(path, opt.Args...)
	cmd.Env = append(cmd.Environ(), opt.Env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &Client{name: strings.Join(append([]string{path}, opt.Args...), " "), cmd: cmd, stdin: stdin, stderr: &tailBuffer{max: 4096}, pending: map[uint64]*call{},
		done: make(chan struct{}), grace: opt.CancelGrace}
	if c.grace == 0 {
		c.grace = 10 * time.Second
	}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
			return nil, &UnavailableError{Reason: "GPU worker not found at " + path, Detail: err.Error()}
		}
		return nil, &UnavailableError{Reason: "GPU worker " + path + " could not be started", Detail: err.Error()}
	}
	timeout := opt.HelloTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	type helloResult struct {
		h   Hello
		pre []byte // what came instead of Magic
		err error
	}
	got := make(chan helloResult, 1)
	go func() {
		var r helloResult
		magic := make([]byte, len(Magic))
		n, err := io.ReadFull(stdout, magic)
		if err != nil || string(magic) != Magic {
			rest, _ := io.ReadAll(io.LimitReader(stdout, 4096))
			r.pre = append(magic[:n], rest...)
			r.err = errNoMagic
			got <- r
			return
		}
		t, b, err := ReadFrame(stdout)
		switch {
		case err != nil:
			r.err = err
		case t != FrameHello:
			r.err = fmt.Errorf("gpuworker: first frame is %s, not hello: %w", t, ErrFrame)
		default:
			r.err = json.Unmarshal(b, &r.h)
		}
		got <- r
	}()
	var r helloResult
	select {
	case r = <-got:
	case <-time.After(timeout):
		c.kill()
		go cmd.Wait()
		return nil, &UnavailableError{Reason: fmt.Sprintf("GPU worker sent no hello within %v", timeout), Detail: c.stderr.String()}
	case <-ctx.Done():
		c.kill()
		go cmd.Wait()
		return nil, ctx.Err()
	}
	if r.err != nil {
		c.kill() // it may still run, blocked on a full pipe
		werr := cmd.Wait()
		detail := strings.TrimSpace(string(r.pre) + "\n" + c.stderr.String())
		if r.err == errNoMagic {
			return nil, &UnavailableError{Reason: explain(detail, werr), Detail: oneLine(detail)}
		}
		return nil, &UnavailableError{Reason: "GPU worker protocol error: " + r.err.Error(), Detail: oneLine(detail)}
	}
	if r.h.Protocol != ProtocolVersion {
		c.kill()
		go cmd.Wait()
		return nil, &UnavailableError{Reason: fmt.Sprintf("GPU worker speaks protocol %d, this program %d: rebuild both", r.h.Protocol, ProtocolVersion)}
	}
	c.hello = r.h
	go c.readLoop(stdout)
	return c, nil
}

var errNoMagic = errors.New("no magic")

// explain turns what a worker printed before dying into one line for the UI.
func explain(detail string, exit error) string {
	known := []struct{ needle, reason string }{
		{"NoDevice", "no CUDA-capable GPU found (cuInit: NoDevice)"},
		{"libcuda.so", "the NVIDIA driver library libcuda.so.1 is not installed"},
		{"InsufficientDriver", "the NVIDIA driver is too old for this build"},
		{"NotInitialized", "the CUDA driver could not be initialised"},
		{"no compiled kernels", "the worker was built without kernels (run make kernels)"},
	}
	for _, k := range known {
		if strings.Contains(detail, k.needle) {
			return k.reason
		}
	}
	if detail != "" {
		return oneLine(detail)
	}
	if exit != nil {
		return "GPU worker exited before its hello: " + exit.Error()
	}
	return "GPU worker closed its output before its hello"
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// Hello is what the worker reported at start.
func (c *Client) Hello() Hello { return c.hello }

// Done is closed once the worker has exited; Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is nil while the worker runs; once it has exited (Done is closed) it
// is the *WorkerDiedError that says how, also after Close.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.diedErr
	default:
		return nil
	}
}

func (c *Client) readLoop(stdout io.Reader) {
	var rerr error
	for {
		t, b, err := ReadFrame(stdout)
		if err != nil {
			if err != io.EOF {
				rerr = err
			}
			break
		}
		if err := c.dispatch(t, b); err != nil {
			rerr = err
			break
		}
	}
	if rerr != nil {
		c.kill() // a worker that breaks the protocol cannot be trusted further
	}
	werr := c.cmd.Wait()
	status := "exit status 0"
	if werr != nil {
		status = werr.Error()
	}
	if rerr != nil {
		status += "; " + rerr.Error()
	}
	c.mu.Lock()
	c.diedErr = &WorkerDiedError{Worker: c.name, PID: c.hello.PID, Status: status, Stderr: oneLine(c.stderr.String())}
	for id, cl := range c.pending {
		delete(c.pending, id)
		cl.close()
	}
	c.mu.Unlock()
	close(c.done)
}

func (c *Client) dispatch(t FrameType, b []byte) error {
	switch t {
	case FrameEvent:
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			return fmt.Errorf("gpuworker: event: %v: %w", err, ErrFrame)
		}
		if cl := c.lookup(e.ID); cl != nil {
			cl.push(message{event: &e})
		}
	case FramePCM:
		p, err := DecodePCM(b)
		if err != nil {
			return err
		}
		if cl := c.lookup(p.ID); cl != nil {
			cl.push(message{pcm: &p})
		}
	case FrameReply:
		var r Reply
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("gpuworker: reply: %v: %w", err, ErrFrame)
		}
		c.mu.Lock()
		cl := c.pending[r.ID]
		delete(c.pending, r.ID)
		c.mu.Unlock()
		if cl != nil {
			cl.push(message{reply: &r})
		}
	default:
		return fmt.Errorf("gpuworker: the worker sent a %s frame: %w", t, ErrFrame)
	}
	return nil
}

func (c *Client) lookup(id uint64) *call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending[id]
}

func (c *Client) write(t FrameType, b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return WriteFrame(c.stdin, t, b)
}

// Call sends op with args and waits for its reply, passing the request's
// events and PCM to the callbacks in the order the worker sent them, on the
// caller's goroutine (never on the client's reader). Cancelling ctx asks the
// worker to stop the request; Call then waits for the reply (the take's end)
// up to the cancel grace, after which it ends the worker. If the worker
// dies, Call delivers what arrived before and returns its *WorkerDiedError.
func (c *Client) Call(ctx context.Context, op string, args any, onEvent func(Event), onPCM func(PCM)) (json.RawMessage, error) {
	var raw json.RawMessage
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("engine worker: %s arguments: %w", op, err)
		}
		raw = b
	}
	cl := newCall()
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return nil, c.diedErr
	default:
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = cl
	c.mu.Unlock()
	b, _ := json.Marshal(Request{ID: id, Op: op, Args: raw})
	if err := c.write(FrameRequest, b); err != nil {
		<-c.done // a failed write means the worker is gone: report why
		return nil, c.diedErr
	}
	var grace <-chan time.Time
	ctxDone := ctx.Done()
	for {
		select {
		case <-cl.ready:
			msgs, gone := cl.take()
			for _, m := range msgs {
				switch {
				case m.event != nil:
					if onEvent != nil {
						onEvent(*m.event)
					}
				case m.pcm != nil:
					if onPCM != nil {
						onPCM(*m.pcm)
					}
				case m.reply != nil:
					if m.reply.Error != "" {
						return nil, &RemoteError{Op: op, Message: m.reply.Error, Kind: m.reply.Kind}
					}
					return m.reply.Result, nil
				}
			}
			if gone {
				<-c.done
				return nil, c.diedErr
			}
		case <-ctxDone:
			ctxDone = nil
			var idb [8]byte
			binary.LittleEndian.PutUint64(idb[:], id)
			c.write(FrameCancel, idb[:])
			grace = time.After(c.grace)
		case <-grace:
			// A worker that ignores a cancel is stuck (a hung driver call,
			// say): end it, so that the next call starts a fresh one
			// rather than queueing behind the stuck request.
			c.mu.Lock()
			delete(c.pending, id)
			c.mu.Unlock()
			c.kill()
			return nil, fmt.Errorf("engine worker %s (pid %d): %s: cancelled, and the worker did not answer within %v, so it was ended: %w",
				c.name, c.hello.PID, op, c.grace, ctx.Err())
		}
	}
}

// Close ends the worker: its input closes, it finishes and exits; after a few
// seconds it is killed.
func (c *Client) Close() error {
	c.wmu.Lock()
	c.stdin.Close()
	c.wmu.Unlock()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.kill()
		<-c.done
	}
	return nil
}

func (c *Client) kill() {
	if c.cmd.Process != nil {
		c.cmd.Process.Kill()
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(t.buf.String())
}
