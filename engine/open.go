package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"proscenium/engine/audio"
	"proscenium/engine/cpu"
	"proscenium/engine/demo"
	"proscenium/engine/drama3"
	"proscenium/engine/tokenizer"
)

// This file opens a checkpoint directory as an Engine and runs takes on it:
// the request is checked, the prompt built and tokenised, the backend-
// independent loop of engine/drama3 drives the backend, and its progress
// becomes the Events of this package.

// Options configures Open.
type Options struct {
	// Probe, when set, sees intermediate tensors of every take for stage
	// comparisons (proscenium debug take): the backend's ("prefill_hidden",
	// "tower_layer.L", "feedback_row", "backbone_hidden"; see cpu.Backend)
	// and the loop's "logits.CB" (every logits vector the sampler reads,
	// codebook CB, the semantic one with end of speech last). It must not
	// keep values.
	Probe func(name string, values []float32)
}

// StagePrompt is the Finish.Stages entry of prompt building and tokenising;
// the others are the loop's (drama3.Stage*).
const StagePrompt = "prompt"

// Open loads the checkpoint directory dir (config.json, safetensors,
// tokenizer.json, codec.pth) on the CPU backend.
func Open(dir string, opts Options) (Engine, error) {
	tok, err := tokenizer.LoadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, err
	}
	b, cfg, err := cpu.LoadBackend(dir, tok)
	if err != nil {
		return nil, err
	}
	demoModel, err := usesDemoCodec(dir)
	if err != nil {
		return nil, err
	}
	info := Info{
		Model:           dir,
		Backend:         "cpu",
		Demo:            demoModel,
		SampleRate:      SampleRate,
		SamplesPerFrame: b.SamplesPerFrame(),
		Codebooks:       cfg.Audio.NumCodebooks,
		CodebookSizes:   append([]int(nil), b.CodebookEntries()...),
		Parameters:      drama3.CountParameters(cfg).Total(),
	}
	if opts.Probe != nil {
		b.Probe = opts.Probe
	}
	prompt, err := drama3.NewPromptBuilder(tok, drama3.PromptLimits{})
	if err != nil {
		return nil, err
	}
	return &takeEngine{info: info, backend: b, prompt: prompt, probe: opts.Probe}, nil
}

// SampleRate is the codec's output rate in Hz (Info.SampleRate), the one the
// audio files are written at.
const SampleRate = audio.SampleRate

// usesDemoCodec reports whether dir's codec.pth is the embedded random demo
// codec: such a model speaks no words whatever its other weights.
func usesDemoCodec(dir string) (bool, error) {
	path := filepath.Join(dir, "codec.pth")
	st, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	if st.Size() != int64(len(demo.CodecPTH)) {
		return false, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	return bytes.Equal(data, demo.CodecPTH), nil
}

// takeEngine is an Engine over one drama3.Backend. Takes run one at a time
// (mu); a queued Synthesize waits for the running one.
type takeEngine struct {
	info    Info
	backend drama3.Backend
	prompt  *drama3.PromptBuilder
	probe   func(name string, values []float32)

	mu     sync.Mutex // held for a whole take
	statMu sync.Mutex // guards last and closed
	last   *Finish
	closed bool
}

func (e *takeEngine) Info() Info { return e.info }

// Synthesize runs one take: see Engine.
func (e *takeEngine) Synthesize(ctx context.Context, req SpeechRequest, emit func(Event)) (*Finish, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if emit == nil {
		emit = func(Event) {}
	}
	if req.MaxFrames < 1 {
		return nil, fmt.Errorf("%w: max_frames %d must be at least 1", ErrInvalidRequest, req.MaxFrames)
	}
	sampling := drama3.Sampling{Temperature: req.Sampling.Temperature, TopP: req.Sampling.TopP, TopK: req.Sampling.TopK}
	if err := sampling.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.statMu.Lock()
	closed := e.closed
	e.statMu.Unlock()
	if closed {
		return nil, fmt.Errorf("engine is closed")
	}

	start := time.Now()
	refs := make([]drama3.Reference, len(req.References))
	for i, r := range req.References {
		refs[i] = drama3.Reference{Transcript: r.Transcript, Codes: r.Codes}
	}
	rows, err := e.prompt.ReferenceVoice(req.Text, refs, e.backend.CodebookEntries())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	promptTime := time.Since(start)

	listener := drama3.Listener{
		Frames: func(made int) { emit(Event{Kind: EventFrames, Frames: made}) },
		Audio: func(from, to int, pcm []float32) {
			emit(Event{Kind: EventAudio, Audio: &AudioChunk{FromFrame: from, ToFrame: to, PCM: pcm}})
		},
	}
	if e.probe != nil {
		listener.Logits = func(frame, cb int, l []float32) { e.probe("logits."+strconv.Itoa(cb), l) }
	}
	take := drama3.Take{Prompt: rows.Tokens(), Rows: rows, Sampling: sampling, Seed: req.Seed, MaxFrames: req.MaxFrames, Start: start}
	res, err := drama3.Generate(ctx, e.backend, take, listener)
	if err != nil {
		return nil, err
	}

	frames := len(res.Codes)
	audio := float64(frames*e.info.SamplesPerFrame) / float64(e.info.SampleRate)
	fin := &Finish{
		Reason:           res.Reason,
		Frames:           frames,
		AudioSeconds:     audio,
		TimeToFirstAudio: res.TimeToFirstAudio,
		Elapsed:          res.Elapsed,
		Stages:           res.Stages,
		Codes:            res.Codes,
	}
	fin.Stages[StagePrompt] = promptTime
	if audio > 0 {
		fin.RealTimeFactor = res.Elapsed.Seconds() / audio
	}
	emit(Event{Kind: EventFinished, Finished: fin})
	e.statMu.Lock()
	e.last = fin
	e.statMu.Unlock()
	return fin, nil
}

// Stats reports the process's resident memory (the CPU backend's weights,
// caches and scratch live in it) and the last take.
func (e *takeEngine) Stats() Stats {
	e.statMu.Lock()
	defer e.statMu.Unlock()
	return Stats{Memory: hostMemory(), LastTake: e.last}
}

// Close releases the engine; later takes fail.
func (e *takeEngine) Close() error {
	e.statMu.Lock()
	e.closed = true
	e.statMu.Unlock()
	return nil
}

// hostMemory reads the resident set (VmRSS) and its peak (VmHWM) from
// /proc/self/status; where that file does not exist (not Linux) it reports
// the Go runtime's memory obtained from the OS, with no peak.
func hostMemory() Memory {
	m := Memory{Device: "host"}
	data, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			f := strings.Fields(v)
			if len(f) != 2 || f[1] != "kB" {
				continue
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "VmRSS":
				m.Used = n << 10
			case "VmHWM":
				m.Peak = n << 10
			}
		}
		if m.Used > 0 {
			return m
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.Used = int64(ms.Sys)
	return m
}
