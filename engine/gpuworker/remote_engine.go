package gpuworker

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
)

// OpenEngine loads req in the supervisor's worker (starting one if none
// runs) and returns an api.Engine whose calls go to it. progress, if not
// nil, gets the load's progress on the caller's goroutine.
//
// When the worker dies, the take in flight ends with an error naming the
// worker (the audio delivered before is kept by whoever received it), and
// the next take starts a fresh worker through sup and loads req again.
// Close closes the model in the worker; the process stays with sup.
func OpenEngine(ctx context.Context, sup *Supervisor, req LoadRequest, progress func(done, total int64)) (api.Engine, error) {
	c, err := sup.Client(ctx)
	if err != nil {
		return nil, err
	}
	ld, err := load(ctx, c, req, progress)
	if err != nil {
		return nil, err
	}
	return &remoteEngine{sup: sup, req: req, info: ld.Info, c: c, handle: ld.Handle, cancels: map[*job]context.CancelFunc{}}, nil
}

// OpenIsolated is OpenEngine with a worker of its own, started from path
// with opt: closing the engine also ends the worker.
func OpenIsolated(ctx context.Context, path string, opt Options, req LoadRequest, progress func(done, total int64)) (api.Engine, error) {
	sup := &Supervisor{Path: path, Opt: opt}
	eng, err := OpenEngine(ctx, sup, req, progress)
	if err != nil {
		sup.Close()
		return nil, err
	}
	eng.(*remoteEngine).ownSup = true
	return eng, nil
}

// PID is the process id of the worker that runs eng, or 0 when eng is not
// a worker's engine or its worker has ended.
func PID(eng api.Engine) int {
	e, ok := eng.(*remoteEngine)
	if !ok {
		return 0
	}
	e.mu.Lock()
	c := e.c
	e.mu.Unlock()
	if c.Err() != nil {
		return 0
	}
	return c.Hello().PID
}

func load(ctx context.Context, c *Client, req LoadRequest, progress func(done, total int64)) (Loaded, error) {
	var onEvent func(Event)
	if progress != nil {
		onEvent = func(e Event) {
			if e.Load != nil {
				progress(e.Load.Done, e.Load.Total)
			}
		}
	}
	res, err := c.Call(ctx, OpLoad, req, onEvent, nil)
	if err != nil {
		return Loaded{}, err
	}
	var ld Loaded
	if err := json.Unmarshal(res, &ld); err != nil {
		return Loaded{}, fmt.Errorf("engine worker: load reply: %w", err)
	}
	return ld, nil
}

// job identifies a running take among the engine's cancels.
type job struct{ _ byte }

// remoteEngine is an api.Engine in a worker process: its takes run
// there together, as the worker's engine schedules them.
type remoteEngine struct {
	sup    *Supervisor
	ownSup bool // Close ends the supervisor's worker too (OpenIsolated)
	req    LoadRequest
	info   api.Info

	takes   sync.RWMutex // read-held by each take, held by Close while it closes
	restart sync.Mutex   // held while a dead worker is replaced

	mu      sync.Mutex // guards the fields below
	c       *Client
	handle  uint64
	last    *api.Finish
	closed  bool
	cancels map[*job]context.CancelFunc // the running takes' (the worker runs up to info.Batch together)
}

func (e *remoteEngine) Info() api.Info { return e.info }

// Synthesize runs a take in the worker: see api.Engine. Events reach
// emit on the caller's goroutine, in the worker's order.
func (e *remoteEngine) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if emit == nil {
		emit = func(api.Event) {}
	}
	e.takes.RLock()
	defer e.takes.RUnlock()
	ctx, done, err := e.track(ctx)
	if err != nil {
		return nil, err
	}
	defer done()

	c, handle, err := e.worker(ctx)
	if err != nil {
		return nil, err
	}
	frames := 0
	res, err := c.Call(ctx, OpSynthesize, SynthesizeArgs{Handle: handle, Request: req},
		func(ev Event) {
			frames = ev.Frames
			emit(api.Event{Kind: api.EventFrames, Frames: ev.Frames})
		},
		func(p PCM) {
			chunk := p.Chunk
			emit(api.Event{Kind: api.EventAudio, Audio: &chunk})
		})
	if err != nil {
		var died *WorkerDiedError
		if errors.As(err, &died) {
			return nil, fmt.Errorf("the take ended after %d frames: %w", frames, err)
		}
		return nil, err
	}
	var fw FinishWire
	if err := json.Unmarshal(res, &fw); err != nil {
		return nil, fmt.Errorf("engine worker: synthesize reply: %w", err)
	}
	fin := fw.Finish
	fin.Codes = fw.Codes
	emit(api.Event{Kind: api.EventFinished, Finished: &fin})
	e.mu.Lock()
	e.last = &fin
	e.mu.Unlock()
	return &fin, nil
}

// track is ctx, cancelled also by Close, until done is called; it fails
// when the engine is closed. The caller read-holds e.takes, so that Close
// waits for it.
func (e *remoteEngine) track(ctx context.Context) (_ context.Context, done func(), _ error) {
	ctx, cancel := context.WithCancel(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		cancel()
		return nil, nil, errors.New("engine is closed")
	}
	key := new(job)
	e.cancels[key] = cancel
	return ctx, func() {
		e.mu.Lock()
		delete(e.cancels, key)
		e.mu.Unlock()
		cancel()
	}, nil
}

// worker returns the worker and the engine's handle in it. After the worker
// died it starts a fresh one and loads the model again; the model must come
// back as it was (same Info), or the engine refuses the take. The caller
// read-holds e.takes; takes that find the worker dead together restart it
// once.
func (e *remoteEngine) worker(ctx context.Context) (*Client, uint64, error) {
	e.restart.Lock()
	defer e.restart.Unlock()
	e.mu.Lock()
	c, handle := e.c, e.handle
	e.mu.Unlock()
	select {
	case <-c.Done():
	default:
		return c, handle, nil
	}
	died := c.Err()
	c, err := e.sup.Client(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("restarting the engine worker after %v: %w", died, err)
	}
	ld, err := load(ctx, c, e.req, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("reloading %s in a fresh engine worker after %v: %w", e.req.Model, died, err)
	}
	if !sameModel(ld.Info, e.info) {
		closeHandle(c, ld.Handle)
		return nil, 0, fmt.Errorf("reloading %s in a fresh engine worker: the model changed on disk (%+v, was %+v); load it again", e.req.Model, ld.Info, e.info)
	}
	e.mu.Lock()
	e.c, e.handle = c, ld.Handle
	e.mu.Unlock()
	return c, ld.Handle, nil
}

// sameModel reports whether a reload gave the model the engine described.
func sameModel(a, b api.Info) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// statsTimeout bounds a Stats call: a readout must not hang on a stuck worker.
const statsTimeout = 10 * time.Second

// Stats asks the worker for its figures. Without a running worker it
// reports no memory in use (the process that held it is gone) and says so
// in Memory.Device. LastTake is the last take this engine finished.
func (e *remoteEngine) Stats() api.Stats {
	e.mu.Lock()
	c, handle, last := e.c, e.handle, e.last
	e.mu.Unlock()
	st := api.Stats{Memory: api.Memory{Device: "engine worker not running"}}
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	if res, err := c.Call(ctx, OpStats, HandleArgs{Handle: handle}, nil, nil); err == nil {
		json.Unmarshal(res, &st)
	}
	st.LastTake = last
	return st
}

var (
	_ api.TokenCounter     = (*remoteEngine)(nil)
	_ api.TextChecker      = (*remoteEngine)(nil)
	_ api.ReferenceEncoder = (*remoteEngine)(nil)
	_ api.VoicePrimer      = (*remoteEngine)(nil)
)

// textTimeout bounds a token count or script check: the studio asks while
// the user types.
const textTimeout = 10 * time.Second

// CountTokens counts text with the tokenizer the worker's engine prompts
// with (api.TokenCounter). It does not restart a worker that died: the
// next take does that.
func (e *remoteEngine) CountTokens(text string) (int, error) {
	var n int
	err := e.textCall(OpCount, text, &n)
	return n, err
}

// CheckText applies the worker engine's prompt rules to text
// (api.TextChecker): nil, or the first refusal as a *drama3.TextError.
func (e *remoteEngine) CheckText(text string) error {
	var tc TextCheck
	if err := e.textCall(OpCheck, text, &tc); err != nil {
		return err
	}
	if p := tc.Problem; p != nil {
		return &drama3.TextError{Offset: p.Offset, Token: p.Token, Reason: p.Reason}
	}
	return nil
}

// encodeTimeout bounds an encode: 30 s of audio takes well under a second
// on a GPU, minutes on a worker's CPU engine.
const encodeTimeout = 5 * time.Minute

// EncodeReference encodes a reference recording in the worker
// (api.ReferenceEncoder): the worker's engine must encode references
// itself, or the call fails and says so. Like CountTokens it does not
// restart a worker that died.
func (e *remoteEngine) EncodeReference(samples []float32) ([]int32, int, error) {
	b := make([]byte, 4*len(samples))
	for i, v := range samples {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	var res EncodedReference
	args := func(h uint64) any { return EncodeArgs{Handle: h, Samples: b} }
	if err := e.call(OpEncode, args, encodeTimeout, &res); err != nil {
		return nil, 0, err
	}
	if res.Frames < 0 || len(res.Codes) != res.Frames*e.info.Codebooks {
		return nil, 0, fmt.Errorf("engine worker: encode: %d codes for %d frames of %d codebooks", len(res.Codes), res.Frames, e.info.Codebooks)
	}
	return res.Codes, res.Frames, nil
}

// PrimeVoice primes the worker engine's voice cache (api.VoicePrimer). It
// ends when ctx does or the engine closes. Like CountTokens it does not
// restart a worker that died: a fresh worker's cache is empty, and the next
// take in the voice fills it.
func (e *remoteEngine) PrimeVoice(ctx context.Context, refs []api.Reference) (*api.Primed, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	e.takes.RLock() // Close waits for it, as for a take
	defer e.takes.RUnlock()
	ctx, done, err := e.track(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	var p api.Primed
	if err := e.callCtx(ctx, OpPrime, func(h uint64) any { return PrimeArgs{Handle: h, References: refs} }, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// VoiceKey is the worker engine's key for refs' voice (api.VoicePrimer);
// like CountTokens it does not restart a worker that died.
func (e *remoteEngine) VoiceKey(refs []api.Reference) (string, error) {
	var key string
	err := e.call(OpVoiceKey, func(h uint64) any { return PrimeArgs{Handle: h, References: refs} }, textTimeout, &key)
	return key, err
}

func (e *remoteEngine) textCall(op, text string, result any) error {
	return e.call(op, func(h uint64) any { return TextArgs{Handle: h, Text: text} }, textTimeout, result)
}

// call runs op with args(the engine's handle) on the running worker (never
// starting one) within timeout and decodes its result.
func (e *remoteEngine) call(op string, args func(handle uint64) any, timeout time.Duration, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return e.callCtx(ctx, op, args, result)
}

// callCtx is call until ctx ends.
func (e *remoteEngine) callCtx(ctx context.Context, op string, args func(handle uint64) any, result any) error {
	e.mu.Lock()
	c, handle, closed := e.c, e.handle, e.closed
	e.mu.Unlock()
	if closed {
		return fmt.Errorf("engine is closed")
	}
	select {
	case <-c.Done():
		return fmt.Errorf("engine worker not running (%v); the next take starts a fresh one", c.Err())
	default:
	}
	res, err := c.Call(ctx, op, args(handle), nil, nil)
	if err != nil {
		return err
	}
	return json.Unmarshal(res, result)
}

// Close cancels the running takes, waits for them to end, and closes the model
// in the worker. Later takes fail.
func (e *remoteEngine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	for _, cancel := range e.cancels {
		cancel()
	}
	e.mu.Unlock()
	e.takes.Lock() // every take has ended
	defer e.takes.Unlock()
	e.mu.Lock()
	c, handle := e.c, e.handle
	e.mu.Unlock()
	var err error
	select {
	case <-c.Done(): // the worker, and the model with it, is gone
	default:
		err = closeHandle(c, handle)
	}
	if e.ownSup {
		e.sup.Close()
	}
	return err
}

func closeHandle(c *Client, handle uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	_, err := c.Call(ctx, OpClose, HandleArgs{Handle: handle}, nil, nil)
	return err
}
