// Package sampling holds the sampler's settings and their one rule: the
// CLI, the studio's settings and voices and the speech API read them into
// Settings and check them here (api.Sampling is this type, the engine
// API's name for it); the engine checks each request's at its edge
// (api.SpeechRequest.Validate) and hands the same value down to the
// sampler (engine/drama3) and the GPU's control block. It imports nothing
// of the module, so that both the engine API and drama3 can share it.
package sampling

import (
	"errors"
	"fmt"
	"math"
)

// Settings are the sampler settings, applied to every codebook. TopP = 1
// and TopK = 0 switch those filters off; Temperature = 0 is greedy.
type Settings struct {
	Temperature float32 `json:"temperature"`
	TopP        float32 `json:"top_p"`
	TopK        int     `json:"top_k"`
}

// MaxTemperature bounds Temperature: beyond it every filter-surviving code
// is all but equally likely, and a larger value is a typo.
const MaxTemperature = 100

// Default is the public ports' default: temperature 1, top-p 0.9, top-k 30.
func Default() Settings { return Settings{Temperature: 1, TopP: 0.9, TopK: 30} }

// Error is a refused setting: Field names it as JSON and the flags spell
// it ("temperature", "top_p", "top_k"), and the message starts with that
// name. The engine wraps it in api.ErrInvalidRequest.
type Error struct {
	Field  string
	Reason string // the whole sentence, the field's name first
}

func (e *Error) Error() string { return e.Reason }

func settingError(field, format string, args ...any) error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// FieldOf is the field an Error in err's chain names ("" if none).
func FieldOf(err error) string {
	var se *Error
	if errors.As(err, &se) {
		return se.Field
	}
	return ""
}

// Float32 converts a setting read as float64 (JSON, flags) to the
// float32 the sampler uses, refusing, by field name, a value float32 cannot
// hold as given: not a number, one that overflows to infinity, or a
// non-zero one that rounds to 0 (top_p 1e-50 would become 0 and be refused
// later as if the user had written 0).
func Float32(field string, v float64) (float32, error) {
	f := float32(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, settingError(field, "%s must be a finite number, got %v", field, v)
	case math.IsInf(float64(f), 0):
		return 0, settingError(field, "%s %g is too large", field, v)
	case v != 0 && f == 0:
		return 0, settingError(field, "%s %g is too small to hold (a 32-bit float's smallest is about 1e-45; it would be 0)", field, v)
	}
	return f, nil
}

// Of converts settings read as float64 to Settings (Float32) and
// validates them.
func Of(temperature, topP float64, topK int) (Settings, error) {
	t, err := Float32("temperature", temperature)
	if err != nil {
		return Settings{}, err
	}
	p, err := Float32("top_p", topP)
	if err != nil {
		return Settings{}, err
	}
	s := Settings{Temperature: t, TopP: p, TopK: topK}
	return s, s.Validate()
}

// Validate is the one rule of the settings: temperature in [0,
// MaxTemperature], top_p in (0, 1], top_k ≥ 0. The error is an *Error
// naming the first bad field.
func (s Settings) Validate() error {
	t, p := float64(s.Temperature), float64(s.TopP)
	switch {
	case !(t >= 0 && t <= MaxTemperature):
		return settingError("temperature", "temperature must be in [0, %d] (0 is greedy), got %v", MaxTemperature, s.Temperature)
	case !(p > 0 && p <= 1):
		return settingError("top_p", "top_p must be in (0, 1] (1 switches it off), got %v", s.TopP)
	case s.TopK < 0:
		return settingError("top_k", "top_k must be ≥ 0 (0 switches it off), got %d", s.TopK)
	}
	return nil
}
