// Package voice is what a named voice is — a speaker tag, a leading
// direction, sampling settings and a seed — and how a request's voice name
// resolves: the user's voices (saved in the studio's settings), "default",
// and OpenAI's built-in names, which mean the default voice. The studio
// edits voices and the speech API speaks with them; both check them here.
package voice

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"proscenium/engine/api"
)

// Voice is a named voice. A request that names it starts from its sampling
// settings and seed (the request's own fields win) and speaks its script
// after the voice's speaker tag and direction.
type Voice struct {
	Name string `json:"name"`
	// Speaker is the <|speaker:N|> tag (0..15) the script starts with; nil
	// for none.
	Speaker   *int         `json:"speaker"`
	Direction string       `json:"direction"` // a leading [direction]; "" for none
	Sampling  api.Sampling `json:"sampling"`
	Seed      uint64       `json:"seed"`
	// Reference is the id of the voice's reference recording in the voice
	// library (app/voicelib), whose transcript and codes clone the voice;
	// "" for none (the model's own voice).
	Reference string `json:"reference,omitempty"`
}

// Default is the model's own voice name.
const Default = "default"

// OpenAI are OpenAI's built-in voice names: they mean the default voice
// unless the user has defined a voice of that name, so that clients written
// for OpenAI work unchanged.
var OpenAI = []string{"alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse"}

// Limits.
const (
	MaxVoices       = 64
	MaxNameBytes    = 64
	MaxDirectionLen = 200 // characters
	MaxSpeaker      = 15
	// MaxSeed is the largest seed a JavaScript number holds exactly.
	MaxSeed = 1<<53 - 1
)

// DefaultVoice is the model's own voice: no tag, no direction, the public
// sampling defaults, seed 0.
func DefaultVoice() Voice {
	return Voice{Name: Default, Sampling: api.DefaultSampling()}
}

// CheckDirection checks text spoken as a [direction] (a voice's direction,
// a request's instructions): valid UTF-8, at most MaxDirectionLen
// characters, no brackets (they would end the direction early), no control
// characters or line breaks, and no "<|" or "|>" (the model's structural
// tokens). The error says what is wrong without naming a field.
func CheckDirection(s string) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("is not valid UTF-8")
	case utf8.RuneCountInString(s) > MaxDirectionLen:
		return fmt.Errorf("is %d characters, the limit is %d", utf8.RuneCountInString(s), MaxDirectionLen)
	case strings.ContainsAny(s, "[]"):
		return fmt.Errorf("may not contain [ or ] (it is spoken as one [direction])")
	case strings.Contains(s, "<|") || strings.Contains(s, "|>"):
		return fmt.Errorf("may not contain <| or |> (the model's structural tokens)")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("may not contain control characters or line breaks (found %U)", r)
		}
	}
	return nil
}

// Validate checks a user voice; the error names the voice and the field.
func (v Voice) Validate() error {
	n := v.Name
	switch {
	case n == "" || len(n) > MaxNameBytes || !utf8.ValidString(n) || strings.TrimSpace(n) != n:
		return fmt.Errorf("voice name %q: 1 to %d bytes of UTF-8 without leading or trailing spaces", n, MaxNameBytes)
	case n == Default:
		return fmt.Errorf("voice name %q is the model's own voice and cannot be redefined", n)
	}
	for _, r := range n {
		if unicode.IsControl(r) {
			return fmt.Errorf("voice name %q: control characters are not allowed", n)
		}
	}
	if v.Speaker != nil && (*v.Speaker < 0 || *v.Speaker > MaxSpeaker) {
		return fmt.Errorf("voice %q: speaker must be in 0..%d, got %d", n, MaxSpeaker, *v.Speaker)
	}
	if err := CheckDirection(v.Direction); err != nil {
		return fmt.Errorf("voice %q: direction %w", n, err)
	}
	if err := v.Sampling.Validate(); err != nil {
		return fmt.Errorf("voice %q: %w", n, err)
	}
	if v.Seed > MaxSeed {
		return fmt.Errorf("voice %q: seed must be in [0, %d], got %d", n, uint64(MaxSeed), v.Seed)
	}
	if v.Reference != "" && !referenceID(v.Reference) {
		return fmt.Errorf("voice %q: reference %q is not a voice library id (64 hex digits)", n, v.Reference)
	}
	return nil
}

// referenceID reports whether s is a voice library id: a SHA-256 in
// lower-case hex.
func referenceID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ValidateAll checks a list of user voices: each valid, names unique, at
// most MaxVoices.
func ValidateAll(vs []Voice) error {
	if len(vs) > MaxVoices {
		return fmt.Errorf("%d voices, at most %d", len(vs), MaxVoices)
	}
	for i, v := range vs {
		if err := v.Validate(); err != nil {
			return err
		}
		if slices.ContainsFunc(vs[:i], func(o Voice) bool { return o.Name == v.Name }) {
			return fmt.Errorf("voice name %q is used twice", v.Name)
		}
	}
	return nil
}

// ErrUnknown is returned by Resolve for a name that is no voice.
type ErrUnknown struct {
	Name  string
	Names []string // every voice, "default" first
}

func (e *ErrUnknown) Error() string {
	quoted := make([]string, len(e.Names))
	for i, n := range e.Names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("unknown voice %q: the voices are %s (OpenAI's names %s mean %q unless defined); define voices in the studio",
		e.Name, strings.Join(quoted, ", "), strings.Join(OpenAI, ", "), Default)
}

// Resolve finds the voice a request names: a user voice first, then
// "default" and OpenAI's names (the default voice).
func Resolve(name string, user []Voice) (Voice, error) {
	for _, v := range user {
		if v.Name == name {
			return v, nil
		}
	}
	if name == Default || slices.Contains(OpenAI, name) {
		return DefaultVoice(), nil
	}
	names := []string{Default}
	for _, v := range user {
		names = append(names, v.Name)
	}
	return Voice{}, &ErrUnknown{Name: name, Names: names}
}

// Prefix is what the voice puts before a script: its speaker tag, then its
// direction.
func (v Voice) Prefix() string {
	var b strings.Builder
	if v.Speaker != nil {
		fmt.Fprintf(&b, "<|speaker:%d|>", *v.Speaker)
	}
	if v.Direction != "" {
		b.WriteString("[" + v.Direction + "] ")
	}
	return b.String()
}
