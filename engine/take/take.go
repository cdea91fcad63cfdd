// Package take is the api.Engine of a Drama 3 model over any
// drama3.TakeSet (or one drama3.FrameBackend): it checks requests, builds
// and tokenises the prompt, schedules up to the set's capacity of takes
// together (schedule.go; each take's loop is drama3.TakeRun) and turns
// their progress into engine events. The backend (CPU in this process, CUDA in the worker)
// is chosen by engine/open; this package does not know which it has.
package take

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
	"proscenium/engine/tokenizer"
)

// StagePrompt is the Finish.StagesS entry of prompt building and tokenising;
// the others are the loop's (drama3.Stage*).
const StagePrompt = "prompt"

// Config is what New needs.
type Config struct {
	Info api.Info
	// Takes runs the takes, up to its Capacity together; or Backend, one
	// take at a time. One of the two.
	Takes     drama3.TakeSet
	Backend   drama3.FrameBackend
	Tokenizer *tokenizer.Tokenizer // the checkpoint's: prompts and token counts
	// Memory reports the memory Stats shows (the process's for the CPU
	// backend, the device pool's for a GPU one).
	Memory func() api.Memory
	// Probe, when set, sees every logits vector of every take as
	// "logits.CB" (codebook CB; the semantic one with end of speech last);
	// the backend must be a drama3.LogitsTap (a set: a
	// drama3.TakeLogitsTap). It must not keep values; with several takes
	// live it sees theirs interleaved.
	Probe func(name string, values []float32)
}

// Engine runs takes on one backend; see api.Engine. It also counts
// tokens (api.TokenCounter) and checks scripts (api.TextChecker).
type Engine struct {
	cfg    Config
	prompt *drama3.PromptBuilder
	sched  *scheduler

	statMu  sync.Mutex // guards last, closed and calls' Add
	last    *api.Finish
	closed  bool
	calls   sync.WaitGroup  // Synthesize calls under way (Close waits for them)
	closing context.Context // cancelled by Close: stops the running takes
	close   context.CancelFunc
}

var (
	_ api.Engine       = (*Engine)(nil)
	_ api.TokenCounter = (*Engine)(nil)
	_ api.TextChecker  = (*Engine)(nil)
)

// New makes the engine; it owns c.Backend from now on (Close closes it).
func New(c Config) (*Engine, error) {
	if (c.Backend == nil) == (c.Takes == nil) || c.Tokenizer == nil || c.Memory == nil {
		return nil, fmt.Errorf("take engine: a backend or a take set (one of them), a tokenizer and a memory report are required")
	}
	if c.Probe != nil {
		_, frameTap := c.Backend.(drama3.LogitsTap)
		tap, setTap := c.Takes.(drama3.TakeLogitsTap)
		setTap = setTap && tap.TapsLogits()
		if !frameTap && !setTap {
			return nil, fmt.Errorf("take engine: this backend cannot show logits to a probe")
		}
	}
	prompt, err := drama3.NewPromptBuilder(c.Tokenizer, drama3.PromptLimits{})
	if err != nil {
		return nil, err
	}
	if c.Takes == nil {
		if c.Takes, err = drama3.NewInterleave(c.Backend, nil, 1); err != nil {
			return nil, err
		}
	}
	c.Info.Batch = c.Takes.Capacity()
	e := &Engine{cfg: c, prompt: prompt}
	e.closing, e.close = context.WithCancel(context.Background())
	e.sched = newScheduler(c.Takes, frameAudio(c.Info))
	return e, nil
}

func (e *Engine) Info() api.Info { return e.cfg.Info }

// frameAudio is the audio one frame makes (0 when info does not say).
func frameAudio(info api.Info) time.Duration {
	if info.SampleRate <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) * float64(info.SamplesPerFrame) / float64(info.SampleRate))
}

// Load is the takes running together now and those waiting for a place.
func (e *Engine) Load() (running, waiting int) { return e.sched.load() }

// CountTokens is the length of text in the model's tokens (added tokens
// such as <|speaker:N|> count as one).
func (e *Engine) CountTokens(text string) (int, error) {
	ids, err := e.cfg.Tokenizer.Encode(text)
	if err != nil {
		return 0, err
	}
	return len(ids), nil
}

// CheckText applies the prompt rules (drama3.PromptBuilder.CheckText) to
// text without speaking it.
func (e *Engine) CheckText(text string) error {
	_, err := e.prompt.CheckText(text)
	return err
}

// Synthesize runs one take: see api.Engine. It waits for a place among
// the takes running together, prefills, and makes a frame at every step
// of the batch until it ends; events reach emit on the caller's goroutine.
func (e *Engine) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if emit == nil {
		emit = func(api.Event) {}
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	ctx, leave, err := e.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()

	start := time.Now()
	rows, err := e.prompt.ReferenceVoice(req.Text, drama3Refs(req.References), e.cfg.Takes.CodebookEntries())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", api.ErrInvalidRequest, err)
	}
	promptTime := time.Since(start)

	j := newJob(ctx)
	listener := drama3.Listener{
		Frames: func(made int) { j.events.push(api.Event{Kind: api.EventFrames, Frames: made}) },
		Audio: func(from, to int, pcm []float32) {
			j.events.push(api.Event{Kind: api.EventAudio, Audio: &api.AudioChunk{FromFrame: from, ToFrame: to, PCM: pcm}})
		},
	}
	if probe := e.cfg.Probe; probe != nil {
		listener.Logits = func(frame, cb int, l []float32) { probe("logits."+strconv.Itoa(cb), l) }
	}
	take := drama3.Take{Prompt: rows.Tokens(), Rows: rows, Sampling: req.Sampling, Seed: req.Seed, MaxFrames: req.MaxFrames, Start: start}
	if j.run, err = drama3.NewTakeRun(e.cfg.Takes, e.sched.newID(), take, listener); err != nil {
		return nil, err
	}
	if !e.sched.submit(j) {
		return nil, fmt.Errorf("engine is closed")
	}
	j.deliver(emit)
	if j.err != nil {
		return nil, j.err
	}
	res := j.res

	info := e.cfg.Info
	frames := len(res.Codes)
	audio := float64(frames*info.SamplesPerFrame) / float64(info.SampleRate)
	fin := &api.Finish{
		Reason:             res.Reason,
		Frames:             frames,
		AudioS:             audio,
		TimeToFirstAudioMs: api.Millis(res.TimeToFirstAudio),
		ElapsedS:           api.Seconds(res.Elapsed),
		StagesS:            make(map[string]float64, len(res.Stages)+1),
		Codes:              res.Codes,
		Batch:              res.Batch,
		PromptRows:         len(rows),
		PrefillRows:        len(rows),
	}
	if _, ran := res.Stages[drama3.StagePrefill]; !ran {
		fin.PrefillRows = 0
	} else if res.Prefix != nil {
		fin.PrefillRows, fin.VoiceCached = res.Prefix.Prefilled, res.Prefix.Restored
	}
	for stage, d := range res.Stages {
		fin.StagesS[stage] = api.Seconds(d)
	}
	fin.StagesS[StagePrompt] = api.Seconds(promptTime)
	if audio > 0 {
		fin.RealTimeFactor = res.Elapsed.Seconds() / audio
	}
	emit(api.Event{Kind: api.EventFinished, Finished: fin})
	e.statMu.Lock()
	e.last = fin
	e.statMu.Unlock()
	return fin, nil
}

// drama3Refs is refs as the prompt builder takes them.
func drama3Refs(refs []api.Reference) []drama3.Reference {
	out := make([]drama3.Reference, len(refs))
	for i, r := range refs {
		out[i] = drama3.Reference{Transcript: r.Transcript, Codes: r.Codes}
	}
	return out
}

// enter counts a call in (Synthesize, PrimeVoice), which Close waits for,
// and returns ctx ended also by Close; leave counts it out. It fails when
// the engine is closed.
func (e *Engine) enter(ctx context.Context) (_ context.Context, leave func(), _ error) {
	e.statMu.Lock()
	defer e.statMu.Unlock()
	if e.closed {
		return nil, nil, fmt.Errorf("engine is closed")
	}
	e.calls.Add(1)
	ctx, stop := context.WithCancel(ctx)
	unhook := context.AfterFunc(e.closing, stop)
	return ctx, func() {
		unhook()
		stop()
		e.calls.Done()
	}, nil
}

// Stats reports the backend's memory (with its voice prefix cache's) and
// the last take.
func (e *Engine) Stats() api.Stats {
	e.statMu.Lock()
	last := e.last
	e.statMu.Unlock()
	m := e.cfg.Memory()
	if c, ok := e.cfg.Takes.(drama3.TakePrefixCacher); ok && c.PrefixCache() != nil {
		st := c.PrefixCache().Stats()
		m.VoiceCache, m.VoiceCacheCap, m.VoiceEntries = st.Bytes, st.Cap, st.Entries
		m.VoiceKeys = make([]string, len(st.Held))
		for i, k := range st.Held {
			m.VoiceKeys[i] = k.String()
		}
	}
	return api.Stats{Memory: m, LastTake: last}
}

// Close stops the running takes (they finish as cancels with their audio
// so far), waits for them to end, then closes the backend: no take touches
// the backend's memory after it is freed. Later takes fail; a second Close
// does nothing.
func (e *Engine) Close() error {
	e.statMu.Lock()
	already := e.closed
	e.closed = true
	e.statMu.Unlock()
	if already {
		return nil
	}
	e.close()
	e.sched.close()
	e.calls.Wait() // every caller has its finish
	return e.cfg.Takes.Close()
}
