package app

import (
	"fmt"
	"slices"

	"proscenium/app/voice"
)

// This file is the studio's voices editor: named voices (a speaker tag, a
// leading direction, sampling settings and a seed) kept in the settings,
// which `proscenium serve` speaks when a request names them (voice.Resolve).

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

// Voices returns the user's voices.
func (s *Service) Voices() []voice.Voice { return s.Settings().Voices }

// SaveVoice adds a voice, or replaces the one of the same name, and saves
// the settings. An invalid voice changes nothing; the error names the field.
func (s *Service) SaveVoice(v voice.Voice) ([]voice.Voice, error) {
	st := s.Settings()
	if i := slices.IndexFunc(st.Voices, func(o voice.Voice) bool { return o.Name == v.Name }); i >= 0 {
		st.Voices[i] = v
	} else {
		st.Voices = append(st.Voices, v)
	}
	saved, err := s.SetSettings(st)
	return saved.Voices, err
}

// DeleteVoice removes the voice called name and saves the settings.
func (s *Service) DeleteVoice(name string) ([]voice.Voice, error) {
	st := s.Settings()
	i := slices.IndexFunc(st.Voices, func(o voice.Voice) bool { return o.Name == name })
	if i < 0 {
		return st.Voices, fmt.Errorf("%w: no voice is called %q", ErrInvalid, name)
	}
	st.Voices = slices.Delete(st.Voices, i, i+1)
	saved, err := s.SetSettings(st)
	return saved.Voices, err
}

// VoiceNames lists what the speech API's voice field accepts besides the
// user's voices: "default" and OpenAI's names (which mean the default voice
// unless a user voice has that name).
func (s *Service) VoiceNames() []string {
	return append([]string{voice.Default}, voice.OpenAI...)
}
