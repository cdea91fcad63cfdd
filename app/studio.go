package app

import (
	"fmt"
	"math"

	"proscenium/app/playback"
	"proscenium/app/studio"
	"proscenium/app/takes"
)

// StudioStatus is the status line: the sound card, whether native dialogs
// exist, where takes and exports go, and warnings from start-up (a settings
// file that did not load, take directories skipped).
type StudioStatus struct {
	Audio      playback.AudioStatus `json:"audio"`
	Dialogs    bool                 `json:"dialogs"` // false: paths are typed (browser)
	TakesDir   string               `json:"takes_dir"`
	TakesBytes int64                `json:"takes_bytes"` // on disk
	TakesLimit int64                `json:"takes_limit_bytes"`
	ExportDir  string               `json:"export_dir"`
	DemoDir    string               `json:"demo_dir"`
	GPU        string               `json:"gpu"` // the GPU backend: its device, or why it is unavailable
	Warnings   []string             `json:"warnings"`
}

// Studio reports the status line.
func (s *Service) Studio() StudioStatus {
	st := StudioStatus{Audio: s.speaker.Playback().Output, Dialogs: s.dialogs != nil, ExportDir: takes.DefaultExportDir(), DemoDir: s.demoDir}
	st.TakesDir, st.TakesBytes = s.takes.Usage()
	st.TakesLimit = s.Settings().TakesLimitBytes
	st.GPU = s.model.GPULine()
	st.Warnings = append([]string{}, s.warnings...)
	return st
}

// PlayRequest plays take ID through the sound card from At seconds.
type PlayRequest struct {
	ID int     `json:"id"`
	At float64 `json:"at_s"`
}

// Play plays a take through this machine's sound card (the desktop
// window; the browser plays takes itself). Playing another take while one
// plays switches to it at the requested position (A/B).
func (s *Service) Play(r PlayRequest) (playback.PlaybackStatus, error) {
	if math.IsNaN(r.At) || r.At < 0 {
		return s.Playback(), fmt.Errorf("%w: position %v", studio.ErrInvalid, r.At)
	}
	pcm, t, err := s.takes.TakePCM(r.ID)
	if err != nil {
		return s.Playback(), err
	}
	if err := s.speaker.Play(t.ID, pcm, int64(r.At*float64(playback.OutputSampleRate))); err != nil {
		return s.Playback(), err
	}
	st := s.Playback()
	s.events.Send(studio.EventPlayback, st)
	return st, nil
}

// PausePlayback pauses (true) or resumes (false) what plays.
func (s *Service) PausePlayback(paused bool) playback.PlaybackStatus {
	s.speaker.SetPaused(paused)
	st := s.Playback()
	s.events.Send(studio.EventPlayback, st)
	return st
}

// StopPlayback stops the sound card (a running take keeps running).
func (s *Service) StopPlayback() playback.PlaybackStatus {
	s.speaker.Stop()
	st := s.Playback()
	s.events.Send(studio.EventPlayback, st)
	return st
}

// Playback reports what the sound card plays: a take, or a scene preview.
func (s *Service) Playback() playback.PlaybackStatus {
	st := s.speaker.Playback()
	if id, ok := playback.ScenePreviewOf(st.TakeID); ok {
		st.TakeID, st.ScenePreview = 0, id
	}
	return st
}
