package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"proscenium/app/studio"
	"proscenium/app/voice"
	"proscenium/app/voiceprime"
	"proscenium/engine/api"
)

// This file wires voice priming (app/voiceprime): the voice cache of the
// loaded engine is primed with a voice when it is created, and with the
// open project's cast (each voice, and the voices together as the whole
// script speaks them) when the project opens or is saved and when a model
// loads.

// primeVoice is the voiceprime.Voice of the user's voice called name (a
// voice without a recording primes nothing).
func (s *Service) primeVoice(name string) voiceprime.Voice {
	vs := s.voices.Voices()
	i := slices.IndexFunc(vs, func(v voice.Voice) bool { return v.Name == name })
	if i < 0 {
		return voiceprime.Voice{Name: name}
	}
	v := vs[i]
	return voiceprime.Voice{Name: name, Reference: v.Reference,
		References: func() ([]api.Reference, error) { return s.voices.VoiceReferences(v) }}
}

// primeCast keeps cast (a project's: "" is the model's own voice) as the
// voices to prime, and primes them.
func (s *Service) primeCast(cast []string) {
	vs := make([]voiceprime.Voice, len(cast))
	for i, name := range cast {
		vs[i] = s.primeVoice(name)
	}
	s.primer.Cast(vs...)
}

// voicePrimed says in the status line what a prime did, and shows the
// voice cache's size and the voices it holds (a voice found held counts:
// the cast it was asked for may be new).
func (s *Service) voicePrimed(v voiceprime.Voice, p *api.Primed, err error) {
	if v.Together != nil {
		s.castPrimed(v, p, err)
		return
	}
	switch {
	case errors.Is(err, api.ErrVoiceNotKept):
		s.events.Notice(studio.NoticeWarning, fmt.Sprintf("voice %q was not made ready ahead (%v): each take in it starts by reading its reference; %s", v.Name, err, largerCache))
	case err != nil:
		s.events.Notice(studio.NoticeWarning, fmt.Sprintf("voice %q was not made ready ahead (%v): its first take starts by reading its reference", v.Name, err))
	case !p.Cached:
		s.events.Notice(studio.NoticeInfo, fmt.Sprintf("voice %q is ready: its reference (%d rows) read in %.0f ms, kept for its takes", v.Name, p.PrefixRows, p.PrefillMs))
	}
	if err == nil {
		s.publishStats() // the cache's size, and the voices it holds
	}
}

// largerCache is what a notice of a voice cache too small tells the user.
const largerCache = "the voice cache's size is in the studio's settings (from the next model load)"

// castPrimed is voicePrimed for the cast's voices together (the whole
// script's take).
func (s *Service) castPrimed(v voiceprime.Voice, p *api.Primed, err error) {
	names := `"` + strings.Join(v.Together, `", "`) + `"`
	switch {
	case errors.Is(err, voiceprime.ErrNoRoom):
		s.events.Notice(studio.NoticeInfo, fmt.Sprintf("the whole script in voices %s was not made ready ahead (%v): each voice's lines start from the voice cache, the whole script's first take reads their references; %s", names, err, largerCache))
	case err != nil:
		s.events.Notice(studio.NoticeWarning, fmt.Sprintf("the whole script in voices %s was not made ready ahead (%v): its first take starts by reading their references", names, err))
	case !p.Cached:
		s.events.Notice(studio.NoticeInfo, fmt.Sprintf("the whole script in voices %s is ready: their references (%d rows) read in %.0f ms, kept for its takes", names, p.PrefixRows, p.PrefillMs))
	}
	if err == nil {
		s.publishStats()
	}
}
