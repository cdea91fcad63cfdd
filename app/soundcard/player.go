package soundcard

import (
	"fmt"
	"sync"

	"github.com/ebitengine/oto/v3"

	pb "proscenium/app/playback"
)

type PlaybackStatus = pb.PlaybackStatus

const (
	PlayStopped = pb.PlayStopped
	PlayPlaying = pb.PlayPlaying
	PlayPaused  = pb.PlayPaused
)

// playback drives the one oto player: the live take as its chunks arrive,
// or a stored take from a position. Starting one stops the other.
type playback struct {
	out *AudioOutput

	mu      sync.Mutex
	player  *oto.Player
	stream  *pcmStream
	takeID  int
	live    bool
	offset  int64 // take sample the stream starts at
	volume  float64
	paused  bool
	enabled bool // settings: output device not "off"
}

func newPlayback(out *AudioOutput) *playback { return &playback{out: out, volume: 1, enabled: true} }

// playerBufferBytes is oto's read-ahead for our player: the engine's first
// chunk (one frame, 2048 samples, 46 ms), so the first chunk alone starts
// playback, and more than the device's period (40 ms buffer, two periods).
const playerBufferBytes = 2048 * 4

func (p *playback) stopLocked() {
	if p.player != nil {
		p.player.Pause()
		p.player = nil
	}
	if p.stream != nil {
		p.stream.close()
		p.stream = nil
	}
	p.takeID, p.live, p.offset, p.paused = 0, false, 0, false
}

func (p *playback) startLocked(ctx *oto.Context, id int, s *pcmStream, offset int64, live bool) {
	p.stopLocked()
	p.stream, p.takeID, p.offset, p.live = s, id, offset, live
	pl := ctx.NewPlayer(s)
	pl.SetBufferSize(playerBufferBytes)
	pl.SetVolume(p.volume)
	p.player = pl
	pl.Play()
}

// liveStream returns the stream a live take feeds, or nil when there is no
// sound card or output is off. Playback starts with the first chunk
// (liveChunk), not here.
func (p *playback) liveStream(id int) *pcmStream {
	if p == nil || p.out.context() == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.enabled {
		return nil
	}
	return &pcmStream{}
}

// liveChunk queues a chunk of the live take; the first one starts playback.
func (p *playback) liveChunk(id int, s *pcmStream, pcm []float32, target int) {
	if s == nil {
		return
	}
	s.setTarget(target)
	s.write(pcm)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stream != s && s.unstarted() {
		if ctx := p.out.context(); ctx != nil {
			p.startLocked(ctx, id, s, 0, true)
		}
	}
}

// liveEnd marks the live take's end; playback continues until it drains.
func (p *playback) liveEnd(s *pcmStream) {
	if s == nil {
		return
	}
	s.close()
	p.mu.Lock()
	if p.stream == s {
		p.live = false
	}
	p.mu.Unlock()
}

// play starts pcm (a whole take) at sample offset.
func (p *playback) play(id int, pcm []float32, offset int64) error {
	if p == nil {
		return fmt.Errorf("cannot play here: %s", (*AudioOutput)(nil).Status().Message)
	}
	ctx := p.out.context()
	if ctx == nil {
		return fmt.Errorf("cannot play: %s", p.out.Status().Message)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.enabled {
		return fmt.Errorf("cannot play: audio output is off in the settings")
	}
	offset = min(max(offset, 0), int64(len(pcm)))
	s := &pcmStream{queue: pcm[offset:], closed: true}
	p.startLocked(ctx, id, s, offset, false)
	return nil
}

func (p *playback) setPaused(paused bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.player == nil {
		return
	}
	p.paused = paused
	if paused {
		p.player.Pause()
		p.stream.pause()
	} else {
		p.stream.resume()
		p.player.Play()
	}
}

func (p *playback) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
}

func (p *playback) setVolume(v float64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.volume = v
	if p.player != nil {
		p.player.SetVolume(v)
	}
}

func (p *playback) setEnabled(on bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.enabled = on
	if !on {
		p.stopLocked()
	}
}

func (p *playback) status() PlaybackStatus {
	if p == nil {
		return PlaybackStatus{State: PlayStopped, Volume: 1, Output: (*AudioOutput)(nil).Status()}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st := PlaybackStatus{State: PlayStopped, Volume: p.volume, Output: p.out.Status()}
	if !p.enabled && st.Output.State == AudioReady {
		st.Output = AudioStatus{State: AudioOff, Message: "audio output is off in the settings"}
	}
	if p.player == nil {
		return st
	}
	played, silence, underruns := p.stream.counts()
	st.TakeID, st.Live, st.Underruns = p.takeID, p.live, underruns
	st.Silence = float64(silence) / OutputSampleRate
	// What the card has not yet played is still in oto's buffer.
	pos := p.offset + played - int64(p.player.BufferedSize()/4)
	st.Position = float64(max(pos, p.offset)) / OutputSampleRate
	switch {
	case p.paused:
		st.State = PlayPaused
	case p.player.IsPlaying():
		st.State = PlayPlaying
	default:
		p.stopLocked() // drained
		st.TakeID, st.Live = 0, false
	}
	return st
}

// Player is the sound card as playback.Speaker.
type Player struct{ p *playback }

// NewPlayer plays through out (OpenAudioOutput).
func NewPlayer(out *AudioOutput) *Player { return &Player{newPlayback(out)} }

var _ pb.Speaker = (*Player)(nil)

func (pl *Player) Status() AudioStatus           { return pl.p.out.Status() }
func (pl *Player) OnChange(fn func(AudioStatus)) { pl.p.out.OnChange(fn) }
func (pl *Player) SetPaused(paused bool)         { pl.p.setPaused(paused) }
func (pl *Player) Stop()                         { pl.p.stop() }
func (pl *Player) SetVolume(v float64)           { pl.p.setVolume(v) }
func (pl *Player) SetEnabled(on bool)            { pl.p.setEnabled(on) }
func (pl *Player) Playback() PlaybackStatus      { return pl.p.status() }

func (pl *Player) Play(id int, pcm []float32, offset int64) error { return pl.p.play(id, pcm, offset) }

// StartLive returns the live take's feed, or nil without a card.
func (pl *Player) StartLive(id int) pb.LiveTake {
	s := pl.p.liveStream(id)
	if s == nil {
		return nil
	}
	return &liveTake{p: pl.p, id: id, s: s}
}

type liveTake struct {
	p  *playback
	id int
	s  *pcmStream
}

func (l *liveTake) Chunk(pcm []float32, target int) { l.p.liveChunk(l.id, l.s, pcm, target) }

func (l *liveTake) End() int {
	l.p.liveEnd(l.s)
	_, _, underruns := l.s.counts()
	return underruns
}
