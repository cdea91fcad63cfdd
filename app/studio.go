package app

import (
	"fmt"
	"math"
)

// StudioStatus is the status line: the sound card, whether native dialogs
// exist, where takes and exports go, and warnings from start-up (a settings
// file that did not load, take directories skipped).
type StudioStatus struct {
	Audio      AudioStatus `json:"audio"`
	Dialogs    bool        `json:"dialogs"` // false: paths are typed (browser)
	TakesDir   string      `json:"takes_dir"`
	TakesBytes int64       `json:"takes_bytes"` // on disk
	TakesLimit int64       `json:"takes_limit"`
	ExportDir  string      `json:"export_dir"`
	DemoDir    string      `json:"demo_dir"`
	GPU        string      `json:"gpu"` // the GPU backend: its device, or why it is unavailable
	Warnings   []string    `json:"warnings"`
}

// Notice levels.
const (
	NoticeInfo    = "info"
	NoticeWarning = "warning"
	NoticeError   = "error"
)

// Notice is a message for the status line.
type Notice struct {
	Level string `json:"level"`
	Text  string `json:"text"`
}

func (s *Service) notice(level, text string) { s.publish(EventNotice, Notice{level, text}) }

// Studio reports the status line.
func (s *Service) Studio() StudioStatus {
	st := StudioStatus{Audio: s.speaker.Playback().Output, Dialogs: s.dialogs != nil, ExportDir: DefaultExportDir(), DemoDir: s.demoDir}
	s.mu.Lock()
	defer s.mu.Unlock()
	st.TakesDir, st.TakesBytes, st.TakesLimit = s.takes.store.dir, s.takes.stored, s.settings.TakesLimitBytes
	st.GPU = s.gpu
	st.Warnings = append([]string{}, s.warnings...)
	return st
}

// PlayRequest plays take ID through the sound card from At seconds.
type PlayRequest struct {
	ID int     `json:"id"`
	At float64 `json:"at"`
}

// Play plays a take through this machine's sound card (the desktop
// window; the browser plays takes itself). Playing another take while one
// plays switches to it at the requested position (A/B).
func (s *Service) Play(r PlayRequest) (PlaybackStatus, error) {
	if math.IsNaN(r.At) || r.At < 0 {
		return s.Playback(), fmt.Errorf("%w: position %v", ErrInvalid, r.At)
	}
	pcm, t, err := s.takePCM(r.ID)
	if err != nil {
		return s.Playback(), err
	}
	if err := s.speaker.Play(t.ID, pcm, int64(r.At*float64(OutputSampleRate))); err != nil {
		return s.Playback(), err
	}
	st := s.Playback()
	s.publish(EventPlayback, st)
	return st, nil
}

// PausePlayback pauses (true) or resumes (false) what plays.
func (s *Service) PausePlayback(paused bool) PlaybackStatus {
	s.speaker.SetPaused(paused)
	st := s.Playback()
	s.publish(EventPlayback, st)
	return st
}

// StopPlayback stops the sound card (a running take keeps running).
func (s *Service) StopPlayback() PlaybackStatus {
	s.speaker.Stop()
	st := s.Playback()
	s.publish(EventPlayback, st)
	return st
}

// Playback reports what the sound card plays.
func (s *Service) Playback() PlaybackStatus { return s.speaker.Playback() }

// byteSize prints bytes in binary units for messages.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
