package app

import "math"

// This file is the service's view of the sound card. The card itself (oto,
// which links ALSA through cgo) lives in app/soundcard, which only the
// desktop window imports: the command line and the GPU worker's machines
// need no ALSA library.

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
	State     string      `json:"state"`
	TakeID    int         `json:"take_id"`  // the take playing or paused; 0 when stopped
	Live      bool        `json:"live"`     // the take is still being made
	Position  float64     `json:"position"` // seconds into the take
	Volume    float64     `json:"volume"`   // 0 … 1
	Underruns int         `json:"underruns"`
	Silence   float64     `json:"silence_seconds"` // silence inserted by underruns
	Output    AudioStatus `json:"output"`
}

// Speaker plays takes through this machine's sound card (soundcard.Player).
type Speaker interface {
	Status() AudioStatus
	OnChange(fn func(AudioStatus))
	// StartLive prepares playback of a take being made; nil when nothing
	// plays (no card, output off). Playback starts with the first chunk.
	StartLive(takeID int) LiveTake
	// Play plays a whole take from sample offset (replay, A/B).
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

// noSpeaker answers for a service without a sound card (browser mode).
type noSpeaker struct{}

func (noSpeaker) Status() AudioStatus {
	return AudioStatus{State: AudioOff, Message: "no audio output in this mode"}
}
func (noSpeaker) OnChange(func(AudioStatus)) {}
func (noSpeaker) StartLive(int) LiveTake     { return nil }
func (noSpeaker) Play(int, []float32, int64) error {
	return errNoSpeaker
}
func (noSpeaker) SetPaused(bool)    {}
func (noSpeaker) Stop()             {}
func (noSpeaker) SetVolume(float64) {}
func (noSpeaker) SetEnabled(bool)   {}
func (noSpeaker) Playback() PlaybackStatus {
	return PlaybackStatus{State: PlayStopped, Volume: 1, Output: noSpeaker{}.Status()}
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
