package voices

import (
	"errors"
	"fmt"
	"slices"

	"proscenium/app/studio"
	"proscenium/app/voice"
	"proscenium/app/voicelib"
	"proscenium/engine/api"
)

// This file is the voice library as the studio and the speech API use it: a
// named voice (app/voice) may carry a reference recording, stored with its
// transcript and cached codes in the library (app/voicelib) under
// Config.Dir; a take in that voice puts the reference before its text.

// library opens the voice library with the settings' byte limit, or says
// why there is none.
func (e *Editor) library() (*voicelib.Library, error) {
	if e.dir == "" {
		return nil, fmt.Errorf("%w: this process keeps no voice library", studio.ErrInvalid)
	}
	lib, err := voicelib.Open(e.dir)
	if err != nil {
		return nil, err
	}
	lib.MaxBytes = e.settings.Get().VoiceLibraryMaxBytes
	return lib, nil
}

// dropUnused removes the library entry id (a replaced or deleted voice's
// recording) unless one of voices still uses it.
func (e *Editor) dropUnused(voices []voice.Voice, id string) error {
	if id == "" || e.dir == "" || slices.ContainsFunc(voices, func(v voice.Voice) bool { return v.Reference == id }) {
		return nil
	}
	lib, err := e.library()
	if err != nil {
		return err
	}
	if err := lib.Delete(id); err != nil && !errors.Is(err, voicelib.ErrNotFound) {
		return fmt.Errorf("the voice was saved; removing its old recording failed: %w", err)
	}
	return nil
}

// SweepLibrary removes the library's entries no voice uses and what
// interrupted writes left, returning what it removed. It does nothing
// unless the settings came from their file: with the defaults (a first
// run, a settings file that did not load) every entry would look unused.
func (e *Editor) SweepLibrary() ([]string, error) {
	if e.dir == "" || !e.settings.FromFile() {
		return nil, nil
	}
	keep := map[string]bool{}
	for _, v := range e.Voices() {
		if v.Reference != "" {
			keep[v.Reference] = true
		}
	}
	lib, err := e.library()
	if err != nil {
		return nil, err
	}
	return lib.Sweep(keep)
}

// CreateVoice adds a voice cloned from a recording (WAV, FLAC, MP3 or Ogg
// Opus, 2–30 s) and its transcript: the recording is encoded by the loaded
// model's codec and kept in the library, and the voice (replacing one of
// the same name) is saved in the settings with the default sampling.
// Nothing changes when any step fails.
func (e *Editor) CreateVoice(name, transcript string, recording []byte) ([]voice.Voice, error) {
	v := voice.Voice{Name: name, Sampling: api.DefaultSampling()}
	if err := v.Validate(); err != nil {
		return e.Voices(), fmt.Errorf("%w: %w", studio.ErrInvalid, err)
	}
	lib, err := e.library()
	if err != nil {
		return e.Voices(), err
	}
	enc, err := e.encoder()
	if err != nil {
		return e.Voices(), err
	}
	entry, err := lib.Add(recording, transcript, enc)
	if err != nil {
		return e.Voices(), fmt.Errorf("%w: %w", studio.ErrInvalid, err)
	}
	// The entry is new or a voice's already: if saving fails, a new one
	// is left for the next start's sweep.
	v.Reference = entry.ID
	return e.SaveVoice(v)
}

// VoiceReferences returns the references a voice speaks with: none for a
// voice without a recording, else its library entry's transcript and codes
// (re-made if the loaded model's codec differs from the one that made them).
func (e *Editor) VoiceReferences(v voice.Voice) ([]api.Reference, error) {
	if v.Reference == "" {
		return nil, nil
	}
	lib, err := e.library()
	if err != nil {
		return nil, err
	}
	enc, err := e.encoder()
	if err != nil {
		return nil, err
	}
	entry, codes, err := lib.Load(v.Reference, enc)
	if errors.Is(err, voicelib.ErrNotFound) {
		return nil, fmt.Errorf("voice %q: its recording is no longer in the voice library (%s): create the voice again", v.Name, e.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("voice %q: %w", v.Name, err)
	}
	return []api.Reference{{Transcript: entry.Transcript, Codes: codes}}, nil
}

// VoiceRecording is a voice's reference recording as the user gave it.
type VoiceRecording struct {
	File string `json:"file"` // its name in the library: reference.wav, .flac, .mp3 or .opus
	Data []byte `json:"data"` // the file's bytes (base64 in JSON)
}

// VoiceRecording returns the recording of a voice's reference (to play it
// back).
func (e *Editor) VoiceRecording(name string) (VoiceRecording, error) {
	vs := e.Voices()
	i := slices.IndexFunc(vs, func(v voice.Voice) bool { return v.Name == name })
	if i < 0 || vs[i].Reference == "" {
		return VoiceRecording{}, fmt.Errorf("%w: no voice called %q has a recording", studio.ErrInvalid, name)
	}
	lib, err := e.library()
	if err != nil {
		return VoiceRecording{}, err
	}
	data, file, err := lib.Recording(vs[i].Reference)
	return VoiceRecording{File: file, Data: data}, err
}

// CastRequest is a studio take spoken by cast voices.
type CastRequest struct {
	Request api.SpeechRequest `json:"request"`
	// Cast names the voice of <|speaker:0|>, <|speaker:1|>, … in order:
	// voice i's recording becomes reference i, which the prompt tags
	// <|speaker:i|>. A script without speaker tags casts one voice.
	Cast []string `json:"cast"`
}

// MaxCast is the most voices one take casts (the speech API's reference
// limit).
const MaxCast = 4

// Cast is the request of a take in the cast voices (SpeakCast): each must
// have a recording in the voice library; their references are put in the
// request in order. A request with a cast gives no references of its own.
func (e *Editor) Cast(c CastRequest) (api.SpeechRequest, error) {
	if len(c.Cast) > MaxCast {
		return api.SpeechRequest{}, fmt.Errorf("%w: %d voices cast, at most %d", studio.ErrInvalid, len(c.Cast), MaxCast)
	}
	if len(c.Request.References) > 0 {
		return api.SpeechRequest{}, fmt.Errorf("%w: give a cast or references, not both", studio.ErrInvalid)
	}
	vs := e.Voices()
	req := c.Request
	for i, name := range c.Cast {
		j := slices.IndexFunc(vs, func(v voice.Voice) bool { return v.Name == name })
		if j < 0 || vs[j].Reference == "" {
			return api.SpeechRequest{}, fmt.Errorf("%w: speaker %d: no voice called %q has a recording (create one from a recording first)", studio.ErrInvalid, i, name)
		}
		refs, err := e.VoiceReferences(vs[j])
		if err != nil {
			return api.SpeechRequest{}, fmt.Errorf("%w: speaker %d: %w", studio.ErrInvalid, i, err)
		}
		req.References = append(req.References, refs...)
	}
	return req, nil
}
