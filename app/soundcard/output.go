// Package soundcard plays takes through this machine's sound card with
// github.com/ebitengine/oto/v3 (44.1 kHz mono, float32): the one oto
// context of the process, opened off the UI path with a deadline, and a
// Player (playback.Speaker) fed with a take's chunks as they arrive. It links
// ALSA through cgo, so only the desktop window imports it.
package soundcard

import (
	"fmt"
	"sync"
	"time"

	"github.com/ebitengine/oto/v3"

	pb "proscenium/app/playback"
)

// This file opens the sound card. oto allows one context per process and,
// on a machine without a sound card, its ready channel may never fire
// (measured: ALSA printed "cannot find card '0'" and it blocked for more
// than ten minutes). So the context is created once, off the UI path, and
// waited for with a deadline; absence becomes a status the UI shows.

type (
	AudioStatus = pb.AudioStatus
)

const (
	AudioOpening     = pb.AudioOpening
	AudioReady       = pb.AudioReady
	AudioUnavailable = pb.AudioUnavailable
	AudioOff         = pb.AudioOff
	OutputSampleRate = pb.OutputSampleRate
)

// AudioOutput is the process's one oto context.
type AudioOutput struct {
	mu       sync.Mutex
	status   AudioStatus
	ctx      *oto.Context
	onChange []func(AudioStatus)
}

var (
	theOutput     *AudioOutput
	theOutputOnce sync.Once
)

// OpenAudioOutput starts opening the sound card (once per process) and
// returns at once; the status turns ready, or unavailable when the device
// is not ready within deadline or reports an error. A device that becomes
// ready after the deadline is still taken.
func OpenAudioOutput(deadline time.Duration) *AudioOutput {
	theOutputOnce.Do(func() { theOutput = startAudioOutput(deadline, newOtoContext) })
	return theOutput
}

// contextMaker is oto.NewContext's shape (a stand-in in tests).
type contextMaker func(*oto.NewContextOptions) (*oto.Context, chan struct{}, error)

var newOtoContext contextMaker = oto.NewContext

func startAudioOutput(deadline time.Duration, newContext contextMaker) *AudioOutput {
	o := &AudioOutput{status: AudioStatus{State: AudioOpening, Message: "opening the audio output…"}}
	go o.open(deadline, newContext)
	return o
}

func (o *AudioOutput) open(deadline time.Duration, newContext contextMaker) {
	type opened struct {
		ctx   *oto.Context
		ready chan struct{}
		err   error
	}
	got := make(chan opened, 1)
	go func() {
		c, ready, err := newContext(&oto.NewContextOptions{
			SampleRate: OutputSampleRate, ChannelCount: 1, Format: oto.FormatFloat32LE,
			BufferSize: 40 * time.Millisecond,
		})
		got <- opened{c, ready, err}
	}()
	timeout := time.After(deadline)
	var op opened
	select {
	case op = <-got:
	case <-timeout:
		o.set(AudioStatus{State: AudioUnavailable, Message: fmt.Sprintf("no audio output device (none ready within %v): takes, export and the browser still work", deadline)}, nil)
		op = <-got // a late device is still taken below
		timeout = nil
	}
	if op.err != nil {
		o.set(AudioStatus{State: AudioUnavailable, Message: "no audio output device: " + op.err.Error()}, nil)
		return
	}
	select {
	case <-op.ready:
	case <-timeout:
		o.set(AudioStatus{State: AudioUnavailable, Message: fmt.Sprintf("no audio output device (none ready within %v): takes, export and the browser still work", deadline)}, nil)
		<-op.ready
	}
	if err := op.ctx.Err(); err != nil {
		o.set(AudioStatus{State: AudioUnavailable, Message: "no audio output device: " + err.Error()}, nil)
		return
	}
	o.set(AudioStatus{State: AudioReady, Message: fmt.Sprintf("audio output ready (%d Hz mono)", OutputSampleRate)}, op.ctx)
}

func (o *AudioOutput) set(st AudioStatus, ctx *oto.Context) {
	o.mu.Lock()
	o.status = st
	if ctx != nil {
		o.ctx = ctx
	}
	fns := append([]func(AudioStatus){}, o.onChange...)
	o.mu.Unlock()
	for _, fn := range fns {
		fn(st)
	}
}

// Status reports the device state.
func (o *AudioOutput) Status() AudioStatus {
	if o == nil {
		return AudioStatus{State: AudioOff, Message: "no audio output in this mode"}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.status
}

// OnChange calls fn after every status change.
func (o *AudioOutput) OnChange(fn func(AudioStatus)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.onChange = append(o.onChange, fn)
}

// context returns the ready context, or nil.
func (o *AudioOutput) context() *oto.Context {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.status.State != AudioReady {
		return nil
	}
	return o.ctx
}
