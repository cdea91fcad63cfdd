// Package settings owns the studio's remembered choices (Settings): their
// defaults, the limits every field and every take request is checked
// against (Validate, ValidateSpeech), and the one JSON file under the XDG
// config directory they live in, read and written by a Store behind its
// own lock.
//
// It knows nothing of models, takes or servers: the packages that act on a
// setting read it from the Store (app wires them).
package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/adrg/xdg"

	"proscenium/app/internal/files"
	"proscenium/app/lexicon"
	"proscenium/app/studio"
	"proscenium/app/voice"
	"proscenium/app/voicelib"
	"proscenium/engine/api"
)

// Settings are the studio's remembered choices: the script draft, the
// sampling settings, seed and frame budget of the next take, the model
// directory, the sampling presets, the memory cap, the audio output, the
// server port and the takes' size limit. They live in one JSON file under
// the XDG config directory.
type Settings struct {
	Script    string       `json:"script"`
	Sampling  api.Sampling `json:"sampling"`
	Seed      uint64       `json:"seed"`
	MaxFrames int          `json:"max_frames"`
	ModelDir  string       `json:"model_dir"`
	Presets   []Preset     `json:"presets"`
	// MemoryCapBytes refuses to load a model whose estimated memory (see
	// InspectModel) passes it; 0 is no cap.
	MemoryCapBytes int64 `json:"memory_cap_bytes"`
	// OutputDevice is OutputDefault (the system's default sound card) or
	// OutputOff (play nothing; takes and export still work).
	OutputDevice string  `json:"output_device"`
	Volume       float64 `json:"volume"` // 0 … 1
	// ServerPort is the port `proscenium serve` listens on when none is given.
	ServerPort int `json:"server_port"`
	// TakesLimitBytes caps the takes kept on disk; the oldest go first.
	TakesLimitBytes int64 `json:"takes_limit_bytes"`
	// VoiceLibraryMaxBytes caps the voice library's recordings and codes
	// together: a new voice past it is refused (app/voicelib).
	VoiceLibraryMaxBytes int64 `json:"voice_library_max_bytes"`
	// Voices are the user's named voices (app/voices), spoken by the
	// speech API.
	Voices []voice.Voice `json:"voices"`
	// IsolateEngine runs the engine in a child process (engine/gpuworker)
	// from the next model load on: a crash there fails the take, not the studio.
	IsolateEngine bool `json:"isolate_engine"`
	// Batch is the most takes the engine runs together from the next model
	// load on (the speech API's concurrent requests, the studio's
	// variations); 0 is api.DefaultBatch, 1 one take at a time.
	Batch int `json:"batch"`
	// VoiceCacheBytes is the most memory the engine keeps cloned voices'
	// states in from the next model load on (open.Options.VoiceCacheBytes):
	// 0 is automatic (512 MiB, and on a GPU with room an eighth of the
	// memory left beside the model, device or, where experts live in host
	// memory, pinned host memory, up to 8 GiB: cuda.AutoVoiceCache), else
	// MinVoiceCache to MaxVoiceCache.
	VoiceCacheBytes int64 `json:"voice_cache_bytes"`
	// Lexicon says words the engine is to say otherwise than they are
	// written, in every take, the studio's and the speech API's
	// (app/lexicon).
	Lexicon []lexicon.Entry `json:"lexicon"`
}

// Preset is a named set of sampling settings.
type Preset struct {
	Name     string       `json:"name"`
	Sampling api.Sampling `json:"sampling"`
}

// Output devices.
const (
	OutputDefault = "default"
	OutputOff     = "off"
)

// DefaultServerPort is where `proscenium serve` listens by default.
const DefaultServerPort = 7860

// DefaultTakesLimit is the takes' default size limit: 2 GiB, about 3.4
// hours of float32 audio at 44.1 kHz.
const DefaultTakesLimit = 2 << 30

// maxPresets caps the presets list.
const maxPresets = 32

// DefaultPresets: the public defaults, a narrower sampler, and greedy.
func DefaultPresets() []Preset {
	return []Preset{
		{Name: "Public defaults", Sampling: api.DefaultSampling()},
		{Name: "Narrow (T 0.7, top-p 0.8, top-k 20)", Sampling: api.Sampling{Temperature: 0.7, TopP: 0.8, TopK: 20}},
		{Name: "Greedy (T 0)", Sampling: api.Sampling{Temperature: 0, TopP: 1, TopK: 0}},
	}
}

// Clone is a copy that shares no slice with s.
func (s Settings) Clone() Settings {
	s.Presets = append([]Preset(nil), s.Presets...)
	s.Voices = cloneVoices(s.Voices)
	s.Lexicon = slices.Clone(s.Lexicon)
	return s
}

// Limits on what a setting or request may hold.
const (
	// MaxScriptBytes caps a script (UTF-8 bytes): far more than one take
	// speaks, small enough that a pasted file cannot exhaust memory.
	MaxScriptBytes = 64 << 10
	// MaxFramesLimit caps max_frames: 65536 frames of 2048 samples at
	// 44.1 kHz is about 50 minutes of audio.
	MaxFramesLimit = 1 << 16
	// MaxSeed is the largest seed a JavaScript number holds exactly
	// (2^53 − 1), so the UI shows and sends back the seed it was given.
	MaxSeed = voice.MaxSeed
	// maxSettingsFileBytes bounds what Load reads: the script and the rest,
	// and the largest lexicon.
	maxSettingsFileBytes = 4*MaxScriptBytes + lexicon.MaxEntries*(2*lexicon.MaxEntryBytes+64)
	// MinVoiceCache and MaxVoiceCache bound voice_cache_bytes (besides 0,
	// the default): a smaller cache keeps no voice of a full-size model
	// (a 10 s voice's state is about 84 MB), and the largest is more than
	// any card has beside the model.
	MinVoiceCache = 64 << 20
	MaxVoiceCache = 1 << 40
)

// Default: the public sampling defaults, seed 0, and
// api.DefaultMaxFrames.
func Default() Settings {
	return Settings{Sampling: api.DefaultSampling(), MaxFrames: api.DefaultMaxFrames, Presets: DefaultPresets(),
		OutputDevice: OutputDefault, Volume: 1, ServerPort: DefaultServerPort, TakesLimitBytes: DefaultTakesLimit,
		VoiceLibraryMaxBytes: voicelib.DefaultMaxBytes, Voices: []voice.Voice{}, Lexicon: []lexicon.Entry{}}
}

// ValidateSampling checks the sampler settings by their one rule
// (sampling.Settings.Validate), wrapping studio.ErrInvalid.
func ValidateSampling(s api.Sampling) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("%w: %w", studio.ErrInvalid, err)
	}
	return nil
}

func validateSeedFrames(seed uint64, maxFrames int) error {
	if seed > MaxSeed {
		return fmt.Errorf("%w: seed must be in [0, %d], got %d", studio.ErrInvalid, uint64(MaxSeed), seed)
	}
	if maxFrames <= 0 || maxFrames > MaxFramesLimit {
		return fmt.Errorf("%w: max_frames must be in [1, %d], got %d", studio.ErrInvalid, MaxFramesLimit, maxFrames)
	}
	return nil
}

// ValidateScript checks a script's size and encoding.
func ValidateScript(text string) error {
	if len(text) > MaxScriptBytes {
		return fmt.Errorf("%w: script is %d bytes, the limit is %d", studio.ErrInvalid, len(text), MaxScriptBytes)
	}
	if !utf8.ValidString(text) {
		return fmt.Errorf("%w: script is not valid UTF-8", studio.ErrInvalid)
	}
	return nil
}

// Validate checks every field; the error names the first bad one.
func (s Settings) Validate() error {
	if err := ValidateScript(s.Script); err != nil {
		return err
	}
	if err := ValidateSampling(s.Sampling); err != nil {
		return err
	}
	if err := validateSeedFrames(s.Seed, s.MaxFrames); err != nil {
		return err
	}
	if len(s.ModelDir) > 4096 || strings.ContainsRune(s.ModelDir, 0) {
		return fmt.Errorf("%w: model_dir is not a usable path", studio.ErrInvalid)
	}
	if len(s.Presets) > maxPresets {
		return fmt.Errorf("%w: presets: %d, at most %d", studio.ErrInvalid, len(s.Presets), maxPresets)
	}
	for i, p := range s.Presets {
		if p.Name == "" || len(p.Name) > 80 || !utf8.ValidString(p.Name) {
			return fmt.Errorf("%w: presets[%d]: a name of 1 to 80 bytes is needed", studio.ErrInvalid, i)
		}
		if err := ValidateSampling(p.Sampling); err != nil {
			return fmt.Errorf("presets[%d] (%s): %w", i, p.Name, err)
		}
	}
	if _, err := api.BatchOf(s.Batch); err != nil {
		return fmt.Errorf("%w: %w", studio.ErrInvalid, err)
	}
	if c := s.VoiceCacheBytes; c != 0 && (c < MinVoiceCache || c > MaxVoiceCache) {
		return fmt.Errorf("%w: voice_cache_bytes must be 0 (automatic) or from 64 MiB to 1 TiB, got %d", studio.ErrInvalid, c)
	}
	if s.MemoryCapBytes < 0 {
		return fmt.Errorf("%w: memory_cap_bytes must be ≥ 0 (0 is no cap), got %d", studio.ErrInvalid, s.MemoryCapBytes)
	}
	if s.OutputDevice != OutputDefault && s.OutputDevice != OutputOff {
		return fmt.Errorf("%w: output_device must be %q or %q, got %q", studio.ErrInvalid, OutputDefault, OutputOff, s.OutputDevice)
	}
	if math.IsNaN(s.Volume) || s.Volume < 0 || s.Volume > 1 {
		return fmt.Errorf("%w: volume must be in [0, 1], got %v", studio.ErrInvalid, s.Volume)
	}
	if s.ServerPort < 1 || s.ServerPort > 65535 {
		return fmt.Errorf("%w: server_port must be in [1, 65535], got %d", studio.ErrInvalid, s.ServerPort)
	}
	if s.TakesLimitBytes < 1<<20 {
		return fmt.Errorf("%w: takes_limit_bytes must be at least 1 MiB, got %d", studio.ErrInvalid, s.TakesLimitBytes)
	}
	if s.VoiceLibraryMaxBytes < 1<<20 {
		return fmt.Errorf("%w: voice_library_max_bytes must be at least 1 MiB, got %d", studio.ErrInvalid, s.VoiceLibraryMaxBytes)
	}
	if err := voice.ValidateAll(s.Voices); err != nil {
		return fmt.Errorf("%w: voices: %w", studio.ErrInvalid, err)
	}
	if err := lexicon.Check(s.Lexicon); err != nil {
		return fmt.Errorf("%w: lexicon: %w", studio.ErrInvalid, err)
	}
	return nil
}

// ValidateSpeech checks a take request the way Settings.Validate checks the
// settings, and also that there is something to say.
func ValidateSpeech(r api.SpeechRequest) error {
	if err := ValidateScript(r.Text); err != nil {
		return err
	}
	if strings.TrimSpace(r.Text) == "" {
		return fmt.Errorf("%w: the script is empty", studio.ErrInvalid)
	}
	if err := ValidateSampling(r.Sampling); err != nil {
		return err
	}
	return validateSeedFrames(r.Seed, r.MaxFrames)
}

// DefaultPath is $XDG_CONFIG_HOME/proscenium/settings.json.
func DefaultPath() string {
	return filepath.Join(xdg.ConfigHome, "proscenium", "settings.json")
}

// Load reads a settings file. A missing file gives the defaults; a
// file that is too large, malformed, has unknown fields or bad values is an
// error naming the file and the problem.
func Load(path string) (Settings, error) {
	data, err := files.ReadCapped(path, maxSettingsFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("settings: %w", err)
	}
	s := Default()
	if err := files.DecodeStrict(data, &s); err != nil {
		return Settings{}, fmt.Errorf("settings %s: %w", path, err)
	}
	if err := s.Validate(); err != nil {
		return Settings{}, fmt.Errorf("settings %s: %w", path, err)
	}
	return s, nil
}

// Save writes the file atomically: a temporary file in the same
// directory, synced, then renamed over the old one.
func Save(path string, s Settings) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return files.WriteAtomic(path, append(data, '\n'))
}

// keepAside renames a file that did not load to path.bad-<UTC time>, so a
// second bad file never replaces the first; a name already taken gets a
// counter.
func keepAside(path string, now time.Time) error {
	base := path + ".bad-" + now.UTC().Format("20060102T150405Z")
	for i := 0; ; i++ {
		bad := base
		if i > 0 {
			bad = fmt.Sprintf("%s-%d", base, i)
		}
		// A hard link never replaces an existing name (a rename would).
		err := os.Link(path, bad)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		return os.Remove(path)
	}
}

func cloneVoices(vs []voice.Voice) []voice.Voice {
	if vs == nil {
		return nil
	}
	out := make([]voice.Voice, len(vs))
	for i, v := range vs {
		if v.Speaker != nil {
			n := *v.Speaker
			v.Speaker = &n
		}
		out[i] = v
	}
	return out
}
