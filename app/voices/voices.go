// Package voices is the studio's voices editor: the user's named voices (a
// speaker tag, a leading direction, sampling settings, a seed and maybe a
// reference recording) kept in the settings, which `proscenium serve`
// speaks when a request names them (voice.Resolve), and the glue to the
// voice library (app/voicelib) that keeps their recordings and codes.
//
// app/voice is what a voice is and how a request resolves it; app/voicelib
// is the library's files. This package only edits: it saves voices through
// the settings (Config.Save) and encodes recordings with the loaded model's
// codec (Config.Encoder); it holds no state of its own and starts no take.
package voices

import (
	"fmt"
	"slices"

	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/app/voice"
	"proscenium/app/voicelib"
)

// Config wires an Editor.
type Config struct {
	// Dir is the voice library (voicelib.DefaultDir); "" offers no
	// reference voices.
	Dir string
	// Settings holds the voices; Save stores changed settings (app's
	// SetSettings).
	Settings *settings.Store
	Save     func(settings.Settings) (settings.Settings, error)
	// Encoder is the loaded model's codec encoder, or why there is none.
	Encoder func() (voicelib.Encoder, error)
}

// Editor edits the user's voices.
type Editor struct {
	dir      string
	settings *settings.Store
	save     func(settings.Settings) (settings.Settings, error)
	encoder  func() (voicelib.Encoder, error)
}

// New makes an Editor.
func New(cfg Config) *Editor {
	return &Editor{dir: cfg.Dir, settings: cfg.Settings, save: cfg.Save, encoder: cfg.Encoder}
}

// Voices returns the user's voices.
func (e *Editor) Voices() []voice.Voice { return e.settings.Get().Voices }

// SaveVoice adds a voice, or replaces the one of the same name, and saves
// the settings; the recording only the replaced voice used leaves the
// library. An invalid voice changes nothing; the error names the field.
func (e *Editor) SaveVoice(v voice.Voice) ([]voice.Voice, error) {
	st := e.settings.Get()
	var old string
	if i := slices.IndexFunc(st.Voices, func(o voice.Voice) bool { return o.Name == v.Name }); i >= 0 {
		old = st.Voices[i].Reference
		st.Voices[i] = v
	} else {
		st.Voices = append(st.Voices, v)
	}
	saved, err := e.save(st)
	if err == nil {
		err = e.dropUnused(saved.Voices, old)
	}
	return saved.Voices, err
}

// DeleteVoice removes the voice called name and saves the settings; its
// recording leaves the library unless another voice uses it.
func (e *Editor) DeleteVoice(name string) ([]voice.Voice, error) {
	st := e.settings.Get()
	i := slices.IndexFunc(st.Voices, func(o voice.Voice) bool { return o.Name == name })
	if i < 0 {
		return st.Voices, fmt.Errorf("%w: no voice is called %q", studio.ErrInvalid, name)
	}
	old := st.Voices[i].Reference
	st.Voices = slices.Delete(st.Voices, i, i+1)
	saved, err := e.save(st)
	if err == nil {
		err = e.dropUnused(saved.Voices, old)
	}
	return saved.Voices, err
}

// VoiceNames lists what the speech API's voice field accepts besides the
// user's voices: "default" and OpenAI's names (which mean the default voice
// unless a user voice has that name).
func (e *Editor) VoiceNames() []string {
	return append([]string{voice.Default}, voice.OpenAI...)
}
