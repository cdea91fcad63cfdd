package soundcard

import (
	"encoding/binary"
	"io"
	"math"
	"sync"
	"time"
)

// pcmStream is what the sound card reads while a take plays: the chunks
// queued so far, as float32 little-endian bytes. It never blocks the audio
// thread. When the queue runs dry before the take has ended (an underrun),
// it hands out silence, counts it, and keeps doing so until enough audio is
// queued again that, at the measured generation speed, the rest of the take
// will not run dry (rebufferSamples); then playback resumes where it left
// off. The silence is recorded (gaps) so a test can rebuild what was played.
type pcmStream struct {
	mu          sync.Mutex
	queue       []float32
	closed      bool  // the take has ended: no more chunks
	played      int64 // take samples handed out
	silence     int64 // silence samples handed out inside the take
	underruns   int   // times the queue ran dry before the end
	rebuffering bool
	target      int // samples to have queued before resuming after an underrun
	gaps        []gap
	// The card's clock, estimated: samples handed out (take and silence)
	// minus what real time has consumed since the first read is what oto
	// still holds. Only when that runs low is silence inserted.
	handed    int64
	clockZero time.Time
	pausedAt  time.Time
	now       func() time.Time
}

// lowWater is how little oto may hold (about 23 ms at 44.1 kHz) before a
// dry queue becomes inserted silence; above it the reader answers "nothing
// yet" and oto asks again a millisecond later.
const lowWater = 1024

// silenceStep is the most silence one read inserts (5.8 ms), so playback
// resumes soon after the queue refills.
const silenceStep = 256

// gap is silence inserted at take sample At.
type gap struct {
	At      int64 `json:"at"`
	Samples int64 `json:"samples"`
}

// write queues a chunk.
func (s *pcmStream) write(pcm []float32) {
	s.mu.Lock()
	s.queue = append(s.queue, pcm...)
	s.mu.Unlock()
}

// close marks the end of the take: once the queue drains, Read says EOF.
func (s *pcmStream) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// setTarget sets how much must be queued before resuming after an underrun.
func (s *pcmStream) setTarget(samples int) {
	s.mu.Lock()
	s.target = samples
	s.mu.Unlock()
}

// Read implements io.Reader for oto (FormatFloat32LE, mono).
func (s *pcmStream) Read(p []byte) (int, error) {
	n := len(p) / 4
	if n == 0 {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	if s.clockZero.IsZero() {
		s.clockZero = now
	}
	if s.rebuffering && (s.closed || len(s.queue) >= max(s.target, 1)) {
		s.rebuffering = false
	}
	if !s.rebuffering && len(s.queue) > 0 {
		k := min(n, len(s.queue))
		for i, v := range s.queue[:k] {
			binary.LittleEndian.PutUint32(p[4*i:], math.Float32bits(v))
		}
		s.queue = s.queue[k:]
		s.played += int64(k)
		s.handed += int64(k)
		return 4 * k, nil
	}
	if s.closed {
		return 0, io.EOF
	}
	consumed := int64(now.Sub(s.clockZero).Seconds() * OutputSampleRate)
	if s.handed-consumed > lowWater && !s.rebuffering {
		return 0, nil // oto still holds enough; it asks again shortly
	}
	n = min(n, silenceStep)
	// Underrun: silence now, counted once per episode.
	if !s.rebuffering {
		s.rebuffering = true
		s.underruns++
		s.gaps = append(s.gaps, gap{At: s.played})
	}
	clear(p[:4*n])
	s.silence += int64(n)
	s.handed += int64(n)
	s.gaps[len(s.gaps)-1].Samples += int64(n)
	return 4 * n, nil
}

func (s *pcmStream) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// pause and resume keep the clock estimate right across a pause.
func (s *pcmStream) pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pausedAt.IsZero() {
		s.pausedAt = s.clock()
	}
}

func (s *pcmStream) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pausedAt.IsZero() && !s.clockZero.IsZero() {
		s.clockZero = s.clockZero.Add(s.clock().Sub(s.pausedAt))
	}
	s.pausedAt = time.Time{}
}

// unstarted reports whether nothing has been read yet and the stream is open.
func (s *pcmStream) unstarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.played == 0 && s.silence == 0 && !s.closed
}

// counts reports take samples played, silence inserted and underruns.
func (s *pcmStream) counts() (played, silence int64, underruns int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.played, s.silence, s.underruns
}
