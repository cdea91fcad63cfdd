package app

import (
	"fmt"
	"math"
	"sync"

	"proscenium/app/playback"
	"proscenium/app/scene"
	"proscenium/app/studio"
)

// scenePreviews keeps the last scene preview (PreviewScene): its audio is
// assembled once and then played from any position, through the sound
// card (PlayScene) or by the browser (GET /api/scene-previews/{id}/pcm).
// One is kept: a new preview replaces it.
type scenePreviews struct {
	mu   sync.Mutex
	last scene.Preview
	next int
}

// PreviewScene assembles a project's scene as saved, for listening before
// it is exported (scene.Preview: the chosen takes at the export's gain,
// lines without one left out and named), and keeps it for PlayScene. The
// reply carries no audio: its waveform, and where each line sits.
func (s *Service) PreviewScene(project string) (scene.Preview, error) {
	st, err := s.projectStore()
	if err != nil {
		return scene.Preview{}, err
	}
	p, err := st.Read(project)
	if err != nil {
		return scene.Preview{}, err
	}
	pv, err := scene.PreviewProject(p, s.takes)
	if err != nil {
		return scene.Preview{}, err
	}
	s.previews.mu.Lock()
	defer s.previews.mu.Unlock()
	s.previews.next++
	pv.ID = s.previews.next
	s.previews.last = pv
	return pv, nil
}

// scenePreview returns the kept preview id's audio and rate.
func (s *Service) scenePreview(id int) ([]float32, int, error) {
	s.previews.mu.Lock()
	defer s.previews.mu.Unlock()
	if id <= 0 || s.previews.last.ID != id {
		return nil, 0, fmt.Errorf("%w: scene preview %d is gone (a newer one replaced it): play the scene again", studio.ErrNotFound, id)
	}
	return s.previews.last.PCM, s.previews.last.Rate, nil
}

// PlayScene plays scene preview r.ID (PreviewScene) through the sound card
// from r.At seconds (the desktop window; the browser plays it itself).
func (s *Service) PlayScene(r PlayRequest) (playback.PlaybackStatus, error) {
	if math.IsNaN(r.At) || r.At < 0 {
		return s.Playback(), fmt.Errorf("%w: position %v", studio.ErrInvalid, r.At)
	}
	pcm, rate, err := s.scenePreview(r.ID)
	if err != nil {
		return s.Playback(), err
	}
	if err := s.speaker.Play(playback.ScenePlayID(r.ID), pcm, int64(r.At*float64(rate))); err != nil {
		return s.Playback(), err
	}
	st := s.Playback()
	s.events.Send(studio.EventPlayback, st)
	return st, nil
}
