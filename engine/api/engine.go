// Package api is the contract between the engine and its callers — the
// app, the HTTP server and the command line: the Engine interface,
// requests and sampling settings, the events a take streams and the
// figures it reports. It holds no implementation: engine/open chooses and
// opens one.
package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// ErrInvalidRequest marks a request an engine refuses as given (text with
// structural tokens, empty or too long; settings out of range): the caller's
// mistake, not a failure. Errors wrap it, so errors.Is finds it.
var ErrInvalidRequest = errors.New("invalid request")

// Sampling is the sampler's settings: sampling.Settings, where their one
// rule lives (Validate; sampling.FieldOf names a refused field).
type Sampling = sampling.Settings

// DefaultSampling is the public ports' default (sampling.Default).
func DefaultSampling() Sampling { return sampling.Default() }

// SamplingOf reads settings given as float64 (JSON, flags): sampling.Of,
// its refusal wrapping ErrInvalidRequest.
func SamplingOf(temperature, topP float64, topK int) (Sampling, error) {
	s, err := sampling.Of(temperature, topP, topK)
	if err != nil {
		return s, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	return s, nil
}

// DefaultBatch is the most takes an engine runs together when the settings
// name no number; MaxBatch the most they may name. 1 runs one take at a
// time.
const (
	DefaultBatch = 4
	MaxBatch     = 8
)

// BatchOf is n with 0 read as DefaultBatch, refused outside [1, MaxBatch].
func BatchOf(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultBatch, nil
	case n < 1 || n > MaxBatch:
		return 0, fmt.Errorf("%w: batch %d: want 1 to %d takes together (0: %d)", ErrInvalidRequest, n, MaxBatch, DefaultBatch)
	}
	return n, nil
}

// ParseBatches reads a comma-separated list of batch sizes, each 1 to
// MaxBatch (bench take --batch 1,2,4,8).
func ParseBatches(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || b < 1 || b > MaxBatch {
			return nil, fmt.Errorf("batch sizes %q: want sizes 1 to %d, comma-separated", s, MaxBatch)
		}
		out = append(out, b)
	}
	return out, nil
}

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
	// References clone a voice: each a recording's transcript and its codes
	// from the codec encoder (app/voicelib caches them). None: the model's
	// own voice.
	References []Reference `json:"references,omitempty"`
}

// Reference is one reference recording of a voice to clone: what it says
// and its codes, one []int of every codebook's code per frame (codebook 0
// first), as the codec encoder made them.
type Reference struct {
	Transcript string  `json:"transcript"`
	Codes      [][]int `json:"codes"`
}

// Validate checks max_frames and the sampling settings, naming the field;
// the text is checked when the engine builds the prompt. Errors wrap
// ErrInvalidRequest.
func (r SpeechRequest) Validate() error {
	if r.MaxFrames < 1 {
		return fmt.Errorf("%w: max_frames %d must be at least 1", ErrInvalidRequest, r.MaxFrames)
	}
	if err := r.Sampling.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	return nil
}

// Finish reasons: the take loop's (drama3), under the engine API's names.
const (
	FinishStop   = drama3.FinishStop   // the model ended the speech
	FinishLength = drama3.FinishLength // max_frames reached; the audio is kept
	FinishCancel = drama3.FinishCancel // the caller stopped the take; the audio so far is kept
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

// Finish is how a take ended and what it cost. Durations are float64 in the
// unit their names end with (Millis, Seconds convert).
type Finish struct {
	Reason             string             `json:"reason"`
	Frames             int                `json:"frames"`
	AudioS             float64            `json:"audio_s"`                // seconds of audio made
	TimeToFirstAudioMs float64            `json:"time_to_first_audio_ms"` // from the request to the first decoded chunk
	ElapsedS           float64            `json:"elapsed_s"`              // the whole take
	RealTimeFactor     float64            `json:"real_time_factor"`       // ElapsedS / AudioS
	StagesS            map[string]float64 `json:"stages_s"`               // seconds spent per stage (prompt, prefill, frame, codec…)
	// Batch is the most takes that made a frame together with this one
	// (1: it ran alone).
	Batch int `json:"batch,omitempty"`
	// PromptRows is the prompt's rows; PrefillRows those the prefill ran
	// (set out to run, for a take stopped within it; 0 when stopped before
	// it): fewer when VoiceCached, the rows of the reference voice (the
	// voice prefix) restored from the voice cache instead.
	PromptRows  int  `json:"prompt_rows,omitempty"`
	PrefillRows int  `json:"prefill_rows,omitempty"`
	VoiceCached bool `json:"voice_cached,omitempty"`
	// Codes are the take's codes, [frame][codebook] (codebook 0 first).
	Codes [][]int `json:"-"`
}

// Info describes a loaded model.
type Info struct {
	Model           string `json:"model"`                    // directory or name
	Backend         string `json:"backend"`                  // "cpu" or "cuda"
	BackendReason   string `json:"backend_reason,omitempty"` // why this backend (the --backend setting, or what auto found)
	Demo            bool   `json:"demo"`                     // random weights: speaks no words
	SampleRate      int    `json:"sample_rate_hz"`
	SamplesPerFrame int    `json:"samples_per_frame"`
	Codebooks       int    `json:"codebooks"`
	CodebookSizes   []int  `json:"codebook_sizes,omitempty"` // entries of each codebook, semantic first
	Parameters      int64  `json:"parameters"`
	// Batch is the most takes the engine runs together (1: one at a
	// time; more wait for a place).
	Batch int `json:"batch,omitempty"`
}

// Memory is device (or host, for the CPU backend) memory in bytes.
type Memory struct {
	Device string `json:"device"`
	Used   int64  `json:"used_bytes"`
	Peak   int64  `json:"peak_bytes"`
	Cap    int64  `json:"cap_bytes"`              // 0: no cap
	Total  int64  `json:"total_bytes,omitempty"`  // the device's whole memory; 0: not reported
	Pinned int64  `json:"pinned_bytes,omitempty"` // page-locked host memory a GPU backend holds
	// VoiceCache is the memory (part of Used) the voice prefix cache holds:
	// the model's state after reference voices, kept for later takes in
	// them; VoiceCacheCap its most (0: no cache). VoiceCacheInHost says it
	// is pinned host memory (part of Pinned) instead: a GPU backend whose
	// experts spill to host memory keeps its device memory for them.
	VoiceCache       int64 `json:"voice_cache_bytes,omitempty"`
	VoiceCacheCap    int64 `json:"voice_cache_cap_bytes,omitempty"`
	VoiceEntries     int   `json:"voice_entries,omitempty"`
	VoiceCacheInHost bool  `json:"voice_cache_in_host,omitempty"`
	// VoiceKeys names each voice state the cache holds (Primed.Key), the
	// most recently used first.
	VoiceKeys []string `json:"voice_keys,omitempty"`
	// Experts is where a GPU backend keeps the routed experts; nil: not a
	// GPU backend.
	Experts *ExpertTier `json:"experts,omitempty"`
}

// ExpertTier is where a GPU backend keeps the routed experts: all on the
// device, or (when the model does not fit the device budget) the experts of
// the last layers in pinned host memory, read over the bus by the kernels.
type ExpertTier struct {
	Tier         string `json:"tier"`          // "fits on the device" or "experts in host memory"
	DeviceBytes  int64  `json:"device_bytes"`  // routed experts on the device
	HostBytes    int64  `json:"host_bytes"`    // routed experts in pinned host memory
	DeviceLayers int    `json:"device_layers"` // layers whose experts are on the device
	Layers       int    `json:"layers"`
	// HitRate is the share of expert reads served from the device: the
	// share of layers whose experts are there (a layer's experts are all on
	// one side, so it does not depend on the routing).
	HitRate float64 `json:"hit_share"`
	// BusBytesPerFrame is what one decode step of one take reads over the
	// bus: top-k experts of every host layer (each read once).
	BusBytesPerFrame int64 `json:"bus_bytes_per_frame"`
	// Cache is the expert cache's measured counts since the load (experts
	// in host memory only): HitRate and BusBytesPerFrame above are the
	// whole-layer placement's model, these what the steps did.
	Cache *ExpertCache `json:"cache,omitempty"`
}

// ExpertCache is what a GPU backend's expert cache measured: each decode
// step's routed (row, expert) pairs read on the device (hits) or over the
// bus (misses), and the experts it moved into device slots.
type ExpertCache struct {
	Slots    int     `json:"slot_experts"`     // device slots for single experts
	Resident int     `json:"resident_experts"` // experts read on the device now
	Total    int     `json:"total_experts"`    // routed experts in all
	Hits     int64   `json:"hits"`
	Misses   int64   `json:"misses"`
	HitRate  float64 `json:"hit_share"`
	// Promotions moved an expert from host memory into a slot, evicting
	// its least-used resident (Evictions).
	Promotions int64 `json:"promoted_experts"`
	Evictions  int64 `json:"evictions"`
	Frames     int64 `json:"frames"`
	// BusBytesPerFrame is the bus traffic per frame: the misses' reads and
	// the promotions' copies.
	BusBytesPerFrame float64 `json:"bus_bytes_per_frame"`
}

// Stats is what the engine reports between and during takes.
type Stats struct {
	Memory   Memory  `json:"memory"`
	LastTake *Finish `json:"last_take,omitempty"`
}

// Engine synthesises speech with one loaded model. Up to Info().Batch takes
// run together (calls beyond wait for a place); Synthesize blocks until its
// take ends.
// Info and Stats may be called at any time, also while a take runs. Cancelling ctx stops the take at the
// next frame: the audio made so far is kept and the take finishes with
// FinishCancel.
// Close stops a running take, waits for it to end and releases the model;
// later calls fail.
type Engine interface {
	Info() Info
	Synthesize(ctx context.Context, req SpeechRequest, emit func(Event)) (*Finish, error)
	Stats() Stats
	Close() error
}

// TokenCounter is implemented by engines that can count text in the loaded
// model's tokens (the studio's script length).
type TokenCounter interface {
	CountTokens(text string) (int, error)
}

// ReferenceEncoder is implemented by engines that encode reference
// recordings (voices to clone) with the loaded model's codec themselves: the
// GPU worker's engine encodes on the device. samples are mono at the model's
// sample rate; codes are frame-major, Info().Codebooks per frame, codebook 0
// first.
type ReferenceEncoder interface {
	EncodeReference(samples []float32) (codes []int32, frames int, err error)
}

// VoicePrimer is implemented by engines that keep a voice cache (the
// model's state after a voice's references, docs/MODEL.md "Voice prefix
// cache"): PrimeVoice prefills refs into it without making a take, so that
// the first take in the voice starts from the cache as later ones do. It
// runs when no take is running or waiting, and never delays one: takes
// that arrive while it waits go first (one that arrives during its prefill
// waits for it). It ends when ctx does, or the engine closes, and fails
// with ErrNoVoiceCache on an engine that keeps none.
//
// VoiceKey is the key PrimeVoice's Primed.Key would give refs' voice,
// without priming it: a voice not primed (the cache had no room for it
// then) can still be cached by a take in it, and Memory.VoiceKeys then
// lists this key. It runs nothing on the device, and fails as PrimeVoice
// does on references that give no voice and on an engine without a cache.
type VoicePrimer interface {
	PrimeVoice(ctx context.Context, refs []Reference) (*Primed, error)
	VoiceKey(refs []Reference) (string, error)
}

// ErrNoVoiceCache: the engine keeps no voice cache (its cap is 0), so a
// voice cannot be primed.
var ErrNoVoiceCache = errors.New("this engine keeps no voice cache")

// ErrVoiceNotKept: the voice was prefilled but the voice cache did not keep
// its state (larger than the cache's cap, or memory short for it); the
// error wrapping it says which. Each take in the voice reads its
// references.
var ErrVoiceNotKept = errors.New("the voice cache did not keep the voice's state")

// Primed is what PrimeVoice did.
type Primed struct {
	// PrefixRows is the voice's rows: the prompt's rows up to and
	// including its last reference frame, the state after them cached.
	PrefixRows int `json:"prefix_rows"`
	// Cached: the voice's state was there already (in the cache, or made
	// by another prime of it begun with this one), so nothing was
	// prefilled for it.
	Cached bool `json:"cached"`
	// Bytes is the memory the voice's state holds in the cache. A voice
	// whose state the cache does not keep (larger than its cap, or memory
	// short for it) is no Primed but ErrVoiceNotKept.
	Bytes int64 `json:"bytes"`
	// WaitedMs is the time it waited for the engine to be idle; PrefillMs
	// the prefill's.
	WaitedMs  float64 `json:"waited_ms"`
	PrefillMs float64 `json:"prefill_ms"`
	// Key names the voice's state in the cache: Memory.VoiceKeys lists it
	// while the cache holds it (an engine's own name, meaningless to
	// another engine or load).
	Key string `json:"key"`
}

// TextChecker is implemented by engines that can check a script against the
// loaded model's prompt rules without speaking it: nil, or the first
// refusal (a *drama3.TextError naming its offset and token).
type TextChecker interface {
	CheckText(text string) error
}
