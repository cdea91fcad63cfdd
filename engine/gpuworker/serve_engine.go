package gpuworker

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
)

// Opener opens a model inside the worker with the backend the worker links
// (the CPU engine in `proscenium worker`, the CUDA engine in proscenium-gpu).
// progress reports the bytes of the checkpoint read so far; it may be
// called from any goroutine.
type Opener func(ctx context.Context, req LoadRequest, progress func(done, total int64)) (api.Engine, error)

// ServeEngine is a worker's main loop: it serves the engine operations
// (OpLoad, OpSynthesize, OpStats, OpCount, OpCheck, OpEncode, OpPrime, OpVoiceKey, OpClose) over in and out until in ends,
// then closes the engines still open. Requests run concurrently, as the
// api.Engine contract allows (Stats during a take; a second take waits
// in the engine).
func ServeEngine(in io.Reader, out io.Writer, hello Hello, open Opener) error {
	h := &engineHost{open: open, engines: map[uint64]api.Engine{}}
	err := Serve(in, out, hello, h.serve)
	h.closeAll()
	return err
}

// engineHost holds the engines a worker has loaded, by handle.
type engineHost struct {
	open Opener

	mu      sync.Mutex
	next    uint64
	engines map[uint64]api.Engine
}

// loadProgressEvery spaces load progress events: a loader may report every
// tensor, the UI needs a few a second.
const loadProgressEvery = 100 * time.Millisecond

func (h *engineHost) serve(ctx context.Context, req Request, out *Emitter) (any, error) {
	switch req.Op {
	case OpLoad:
		var lr LoadRequest
		if err := decodeArgs(req, &lr); err != nil {
			return nil, err
		}
		var pmu sync.Mutex
		var last time.Time
		progress := func(done, total int64) {
			pmu.Lock()
			defer pmu.Unlock()
			if now := time.Now(); done >= total || now.Sub(last) >= loadProgressEvery {
				last = now
				out.Load(done, total)
			}
		}
		eng, err := h.open(ctx, lr, progress)
		if err != nil {
			return nil, err
		}
		h.mu.Lock()
		h.next++
		id := h.next
		h.engines[id] = eng
		h.mu.Unlock()
		return Loaded{Handle: id, Info: eng.Info()}, nil

	case OpSynthesize:
		var sa SynthesizeArgs
		if err := decodeArgs(req, &sa); err != nil {
			return nil, err
		}
		eng, err := h.engine(sa.Handle)
		if err != nil {
			return nil, err
		}
		fin, err := eng.Synthesize(ctx, sa.Request, func(ev api.Event) {
			switch ev.Kind {
			case api.EventFrames:
				out.Event(ev.Frames)
			case api.EventAudio:
				out.PCM(*ev.Audio)
			}
			// EventFinished: the reply carries the Finish.
		})
		if err != nil {
			return nil, err
		}
		return FinishWire{Finish: *fin, Codes: fin.Codes}, nil

	case OpStats:
		var ha HandleArgs
		if err := decodeArgs(req, &ha); err != nil {
			return nil, err
		}
		eng, err := h.engine(ha.Handle)
		if err != nil {
			return nil, err
		}
		return eng.Stats(), nil

	case OpCount, OpCheck:
		var ta TextArgs
		if err := decodeArgs(req, &ta); err != nil {
			return nil, err
		}
		eng, err := h.engine(ta.Handle)
		if err != nil {
			return nil, err
		}
		if req.Op == OpCount {
			tc, ok := eng.(api.TokenCounter)
			if !ok {
				return nil, fmt.Errorf("this engine cannot count tokens")
			}
			return tc.CountTokens(ta.Text)
		}
		tc, ok := eng.(api.TextChecker)
		if !ok {
			return nil, fmt.Errorf("this engine cannot check scripts")
		}
		err = tc.CheckText(ta.Text)
		var te *drama3.TextError
		if errors.As(err, &te) {
			return TextCheck{Problem: &TextProblem{Offset: te.Offset, Token: te.Token, Reason: te.Reason}}, nil
		}
		return TextCheck{}, err

	case OpEncode:
		var ea EncodeArgs
		if err := decodeArgs(req, &ea); err != nil {
			return nil, err
		}
		if len(ea.Samples)%4 != 0 {
			return nil, fmt.Errorf("encode: %d bytes of samples is not a whole number of float32", len(ea.Samples))
		}
		eng, err := h.engine(ea.Handle)
		if err != nil {
			return nil, err
		}
		re, ok := eng.(api.ReferenceEncoder)
		if !ok {
			return nil, fmt.Errorf("this engine cannot encode references")
		}
		samples := make([]float32, len(ea.Samples)/4)
		for i := range samples {
			samples[i] = math.Float32frombits(binary.LittleEndian.Uint32(ea.Samples[4*i:]))
		}
		codes, frames, err := re.EncodeReference(samples)
		if err != nil {
			return nil, err
		}
		return EncodedReference{Frames: frames, Codes: codes}, nil

	case OpPrime, OpVoiceKey:
		var pa PrimeArgs
		if err := decodeArgs(req, &pa); err != nil {
			return nil, err
		}
		eng, err := h.engine(pa.Handle)
		if err != nil {
			return nil, err
		}
		vp, ok := eng.(api.VoicePrimer)
		if !ok {
			return nil, api.ErrNoVoiceCache
		}
		if req.Op == OpVoiceKey {
			return vp.VoiceKey(pa.References)
		}
		return vp.PrimeVoice(ctx, pa.References)

	case OpClose:
		var ha HandleArgs
		if err := decodeArgs(req, &ha); err != nil {
			return nil, err
		}
		h.mu.Lock()
		eng, ok := h.engines[ha.Handle]
		delete(h.engines, ha.Handle)
		h.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("no engine with handle %d", ha.Handle)
		}
		return nil, eng.Close()
	}
	return nil, fmt.Errorf("unknown op %q", req.Op)
}

func (h *engineHost) engine(id uint64) (api.Engine, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	eng, ok := h.engines[id]
	if !ok {
		return nil, fmt.Errorf("no engine with handle %d (closed, or loaded by an earlier worker)", id)
	}
	return eng, nil
}

func (h *engineHost) closeAll() {
	h.mu.Lock()
	engines := h.engines
	h.engines = map[uint64]api.Engine{}
	h.mu.Unlock()
	for _, eng := range engines {
		eng.Close()
	}
}

// decodeArgs reads a request's arguments into v, refusing unknown fields:
// a client and worker that disagree on a message must not half-understand it.
func decodeArgs(req Request, v any) error {
	dec := json.NewDecoder(bytes.NewReader(req.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s arguments: %v", req.Op, err)
	}
	return nil
}
