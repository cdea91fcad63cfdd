// Package engine is the model-independent face of speech synthesis: the
// Engine interface every backend implements, the request and sampling
// settings, the events a take streams, and the figures it reports. The app,
// the HTTP server and the command line talk to this package only; what a
// Drama 3 checkpoint means lives in engine/drama3 and the arithmetic in the
// backends (engine/cpu, engine/cuda).
package engine

import (
	"context"
	"errors"
	"time"
)

// ErrInvalidRequest marks a request an engine refuses as given (text with
// structural tokens, empty or too long; settings out of range): the caller's
// mistake, not a failure. Errors wrap it, so errors.Is finds it.
var ErrInvalidRequest = errors.New("invalid request")

// Sampling holds the sampler settings, applied to every codebook.
// TopP = 1 and TopK = 0 switch those filters off; Temperature = 0 is greedy.
type Sampling struct {
	Temperature float32 `json:"temperature"`
	TopP        float32 `json:"top_p"`
	TopK        int     `json:"top_k"`
}

// DefaultSampling is the public ports' default: temperature 1, top-p 0.9, top-k 30.
func DefaultSampling() Sampling { return Sampling{Temperature: 1, TopP: 0.9, TopK: 30} }

// DefaultMaxFrames is the frame limit of a take that names none, the same in
// the CLI, the studio's settings and the speech API: 2048 frames, about 95 s
// at 21.5 frames/s.
const DefaultMaxFrames = 2048

// SpeechRequest is one take to synthesise.
type SpeechRequest struct {
	Text      string   `json:"text"`
	Sampling  Sampling `json:"sampling"`
	Seed      uint64   `json:"seed"`
	MaxFrames int      `json:"max_frames"`
}

// Finish reasons.
const (
	FinishStop   = "stop"   // the model ended the speech
	FinishLength = "length" // max_frames reached; the audio is kept
	FinishCancel = "cancel" // the caller stopped the take; the audio so far is kept
)

// EventKind says which field of an Event is set.
type EventKind int

const (
	EventFrames   EventKind = iota + 1 // Frames: codes made so far
	EventAudio                         // Audio: a decoded chunk
	EventFinished                      // Finished: the take ended
)

// Event is one thing a take reports while it runs, in order.
type Event struct {
	Kind     EventKind
	Frames   int         // EventFrames: frames made so far
	Audio    *AudioChunk // EventAudio
	Finished *Finish     // EventFinished
}

// AudioChunk is decoded PCM for frames [FromFrame, ToFrame): samples
// [FromFrame·SamplesPerFrame, ToFrame·SamplesPerFrame) of the whole take,
// mono float32 in [-1, 1].
type AudioChunk struct {
	FromFrame int       `json:"from_frame"`
	ToFrame   int       `json:"to_frame"`
	PCM       []float32 `json:"-"`
}

// Finish is how a take ended and what it cost.
type Finish struct {
	Reason           string                   `json:"reason"`
	Frames           int                      `json:"frames"`
	AudioSeconds     float64                  `json:"audio_seconds"`
	TimeToFirstAudio time.Duration            `json:"time_to_first_audio"`
	Elapsed          time.Duration            `json:"elapsed"`
	RealTimeFactor   float64                  `json:"real_time_factor"` // Elapsed / audio duration
	Stages           map[string]time.Duration `json:"stages"`
	// Codes are the take's codes, [frame][codebook] (codebook 0 first).
	Codes [][]int `json:"-"`
}

// Info describes a loaded model.
type Info struct {
	Model           string `json:"model"`   // directory or name
	Backend         string `json:"backend"` // "cpu" or "cuda"
	Demo            bool   `json:"demo"`    // random weights: speaks no words
	SampleRate      int    `json:"sample_rate"`
	SamplesPerFrame int    `json:"samples_per_frame"`
	Codebooks       int    `json:"codebooks"`
	CodebookSizes   []int  `json:"codebook_sizes,omitempty"` // entries of each codebook, semantic first
	Parameters      int64  `json:"parameters"`
}

// Memory is device (or host, for the CPU backend) memory in bytes.
type Memory struct {
	Device string `json:"device"`
	Used   int64  `json:"used"`
	Peak   int64  `json:"peak"`
	Cap    int64  `json:"cap"` // 0: no cap
}

// Stats is what the engine reports between and during takes.
type Stats struct {
	Memory   Memory  `json:"memory"`
	LastTake *Finish `json:"last_take,omitempty"`
}

// Engine synthesises speech with one loaded model. One take runs at a time;
// Synthesize blocks until the take ends (a second call waits for the first).
// Info and Stats may be called at any time, also while a take runs. Cancelling ctx stops the take at the
// next frame: the audio made so far is kept and the take finishes with
// FinishCancel.
type Engine interface {
	Info() Info
	Synthesize(ctx context.Context, req SpeechRequest, emit func(Event)) (*Finish, error)
	Stats() Stats
	Close() error
}
