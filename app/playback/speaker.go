// Package playback is the studio's view of a sound card: the Speaker a
// take plays through (live while it is made, or whole for replay and A/B),
// the statuses the UI shows, and how much audio to queue after an underrun.
//
// It is only the contract: the card itself (oto, which links ALSA through
// cgo) is app/soundcard, which implements Speaker and which only the desktop
// window imports, so the command line and the GPU worker's machines need no
// ALSA library. It must not import a sound library or any other app package.
package playback

import (
	"errors"
	"math"
)

// Audio output states.
const (
	AudioOpening     = "opening"
	AudioReady       = "ready"
	AudioUnavailable = "unavailable"
	AudioOff         = "off" // switched off in the settings, or no card in this mode
)

// OutputSampleRate is the rate the output plays at: the codec's, mono.
const OutputSampleRate = 44100

// AudioStatus is the sound card as the UI shows it.
type AudioStatus struct {
	State   string `json:"state"`
	Message string `json:"message"`
}

// Playback states.
const (
	PlayStopped = "stopped"
	PlayPlaying = "playing"
	PlayPaused  = "paused"
)

// PlaybackStatus is what the transport bar shows about the sound card.
type PlaybackStatus struct {
	State        string      `json:"state"`
	TakeID       int         `json:"take_id"`    // the take playing or paused; 0 when stopped
	Live         bool        `json:"live"`       // the take is still being made
	Position     float64     `json:"position_s"` // seconds into the take (or the scene preview)
	Volume       float64     `json:"volume"`     // 0 … 1
	Underruns    int         `json:"underruns"`
	Silence      float64     `json:"silence_s"` // silence inserted by underruns
	Output       AudioStatus `json:"output"`
	ScenePreview int         `json:"scene_preview_id"` // the scene preview playing or paused (app's PlayScene); 0: none
}

// ScenePlayID is the id a scene preview plays under: minus its own, so it
// is no take's (take ids are positive).
func ScenePlayID(preview int) int { return -preview }

// ScenePreviewOf tells whether id (PlaybackStatus.TakeID as the speaker
// reports it) is a scene preview's, and which.
func ScenePreviewOf(id int) (int, bool) { return -id, id < 0 }

// Speaker plays takes through this machine's sound card (soundcard.Player).
type Speaker interface {
	Status() AudioStatus
	OnChange(fn func(AudioStatus))
	// StartLive prepares playback of a take being made; nil when nothing
	// plays (no card, output off). Playback starts with the first chunk.
	StartLive(takeID int) LiveTake
	// Play plays a whole take from sample offset (replay, A/B), or a scene
	// preview under ScenePlayID.
	Play(takeID int, pcm []float32, offset int64) error
	SetPaused(paused bool)
	Stop()
	SetVolume(v float64)
	SetEnabled(on bool)
	Playback() PlaybackStatus
}

// LiveTake is the playback of a take while it is made.
type LiveTake interface {
	// Chunk queues decoded audio; target is how much must be queued before
	// playback resumes after an underrun (RebufferSamples).
	Chunk(pcm []float32, target int)
	// End marks the take's end and reports the underruns so far.
	End() (underruns int)
}

// ErrNoSpeaker: this process has no sound card of its own.
var ErrNoSpeaker = errors.New("cannot play here: this process has no audio output (the browser plays takes itself)")

// NoSpeaker answers for a service without a sound card (browser mode).
type NoSpeaker struct{}

func (NoSpeaker) Status() AudioStatus {
	return AudioStatus{State: AudioOff, Message: "no audio output in this mode"}
}
func (NoSpeaker) OnChange(func(AudioStatus)) {}
func (NoSpeaker) StartLive(int) LiveTake     { return nil }
func (NoSpeaker) Play(int, []float32, int64) error {
	return ErrNoSpeaker
}
func (NoSpeaker) SetPaused(bool)    {}
func (NoSpeaker) Stop()             {}
func (NoSpeaker) SetVolume(float64) {}
func (NoSpeaker) SetEnabled(bool)   {}
func (NoSpeaker) Playback() PlaybackStatus {
	return PlaybackStatus{State: PlayStopped, Volume: 1, Output: NoSpeaker{}.Status()}
}

// RebufferSamples is how much audio must be queued, after an underrun,
// before playback resumes so that the rest of the take does not run dry:
// with generation at rate frames/s against playback at audioRate frames/s,
// remaining frames still to make, and chunks of up to nextChunk frames
// arriving whole, the queue must cover both the slower production of the
// rest, remaining·(audioRate/rate − 1) frames, and the wait for the next
// chunk, nextChunk·audioRate/rate frames. An unknown rate (no measurement
// yet) asks for one chunk.
func RebufferSamples(rate, audioRate float64, remaining, nextChunk, samplesPerFrame int) int {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nextChunk * samplesPerFrame
	}
	ratio := audioRate / rate
	frames := float64(nextChunk) * ratio
	if ratio > 1 {
		frames = max(frames, float64(remaining)*(ratio-1))
	}
	return int(math.Ceil(frames * float64(samplesPerFrame)))
}
