package app

import (
	"errors"
	"fmt"
	"slices"

	"proscenium/app/voice"
	"proscenium/app/voicelib"
	"proscenium/engine"
)

// This file is the voice library as the studio and the speech API use it: a
// named voice (app/voice) may carry a reference recording, stored with its
// transcript and cached codes in the library (app/voicelib) under
// Config.VoicesDir; a take in that voice puts the reference before its text.

// library opens the voice library, or says why there is none.
func (s *Service) library() (*voicelib.Library, error) {
	if s.voicesDir == "" {
		return nil, fmt.Errorf("%w: this process keeps no voice library", ErrInvalid)
	}
	return voicelib.Open(s.voicesDir)
}

// CreateVoice adds a voice cloned from a recording (WAV, FLAC, MP3 or Ogg
// Opus, 2–30 s) and its transcript: the recording is encoded by the loaded
// model's codec and kept in the library, and the voice (replacing one of
// the same name) is saved in the settings with the default sampling.
// Nothing changes when any step fails.
func (s *Service) CreateVoice(name, transcript string, recording []byte) ([]voice.Voice, error) {
	v := voice.Voice{Name: name, Sampling: engine.DefaultSampling()}
	if err := v.Validate(); err != nil {
		return s.Voices(), fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	lib, err := s.library()
	if err != nil {
		return s.Voices(), err
	}
	enc, err := s.refEncoder()
	if err != nil {
		return s.Voices(), err
	}
	e, err := lib.Add(recording, transcript, enc)
	if err != nil {
		return s.Voices(), fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	v.Reference = e.ID
	return s.SaveVoice(v)
}

// VoiceReferences returns the references a voice speaks with: none for a
// voice without a recording, else its library entry's transcript and codes
// (re-made if the loaded model's codec differs from the one that made them).
func (s *Service) VoiceReferences(v voice.Voice) ([]engine.Reference, error) {
	if v.Reference == "" {
		return nil, nil
	}
	lib, err := s.library()
	if err != nil {
		return nil, err
	}
	enc, err := s.refEncoder()
	if err != nil {
		return nil, err
	}
	e, codes, err := lib.Load(v.Reference, enc)
	if errors.Is(err, voicelib.ErrNotFound) {
		return nil, fmt.Errorf("voice %q: its recording is no longer in the voice library (%s): create the voice again", v.Name, s.voicesDir)
	}
	if err != nil {
		return nil, fmt.Errorf("voice %q: %w", v.Name, err)
	}
	return []engine.Reference{{Transcript: e.Transcript, Codes: codes}}, nil
}

// VoiceRecording is a voice's reference recording as the user gave it.
type VoiceRecording struct {
	File string `json:"file"` // its name in the library: reference.wav, .flac, .mp3 or .opus
	Data []byte `json:"data"` // the file's bytes (base64 in JSON)
}

// VoiceRecording returns the recording of a voice's reference (to play it
// back).
func (s *Service) VoiceRecording(name string) (VoiceRecording, error) {
	vs := s.Voices()
	i := slices.IndexFunc(vs, func(v voice.Voice) bool { return v.Name == name })
	if i < 0 || vs[i].Reference == "" {
		return VoiceRecording{}, fmt.Errorf("%w: no voice called %q has a recording", ErrInvalid, name)
	}
	lib, err := s.library()
	if err != nil {
		return VoiceRecording{}, err
	}
	data, file, err := lib.Recording(vs[i].Reference)
	return VoiceRecording{File: file, Data: data}, err
}

// CastRequest is a studio take spoken by cast voices.
type CastRequest struct {
	Request engine.SpeechRequest `json:"request"`
	// Cast names the voice of <|speaker:0|>, <|speaker:1|>, … in order:
	// voice i's recording becomes reference i, which the prompt tags
	// <|speaker:i|>. A script without speaker tags casts one voice.
	Cast []string `json:"cast"`
}

// MaxCast is the most voices one take casts (the speech API's reference
// limit).
const MaxCast = 4

// SpeakCast starts a take like Speak, in the cast voices: each must have a
// recording in the voice library. The take keeps the cast (Take.Voices) and
// the references (in its request), so re-running it keeps the voices.
func (s *Service) SpeakCast(c CastRequest) (Take, error) {
	if len(c.Cast) == 0 {
		return s.Speak(c.Request)
	}
	if len(c.Cast) > MaxCast {
		return Take{}, fmt.Errorf("%w: %d voices cast, at most %d", ErrInvalid, len(c.Cast), MaxCast)
	}
	if len(c.Request.References) > 0 {
		return Take{}, fmt.Errorf("%w: give a cast or references, not both", ErrInvalid)
	}
	vs := s.Voices()
	req := c.Request
	for i, name := range c.Cast {
		j := slices.IndexFunc(vs, func(v voice.Voice) bool { return v.Name == name })
		if j < 0 || vs[j].Reference == "" {
			return Take{}, fmt.Errorf("%w: speaker %d: no voice called %q has a recording (create one from a recording first)", ErrInvalid, i, name)
		}
		refs, err := s.VoiceReferences(vs[j])
		if err != nil {
			return Take{}, fmt.Errorf("%w: speaker %d: %w", ErrInvalid, i, err)
		}
		req.References = append(req.References, refs...)
	}
	return s.startTake(req, "", c.Cast)
}
