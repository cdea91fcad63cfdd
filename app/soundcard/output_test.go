package soundcard

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ebitengine/oto/v3"
)

// A sound card that never becomes ready (measured on a machine without
// one: blocked for more than ten minutes) is reported after the deadline;
// one that fails is reported at once. Neither blocks the caller
// (TestAudioOutputStartDoesNotWait).
func TestAudioOutputAbsenceIsAStatus(t *testing.T) {
	tests := []struct {
		name string
		make contextMaker
		want string
	}{
		{"never ready", func(*oto.NewContextOptions) (*oto.Context, chan struct{}, error) {
			return nil, make(chan struct{}), nil
		}, "none ready within 50ms"},
		{"blocks in NewContext", func(*oto.NewContextOptions) (*oto.Context, chan struct{}, error) {
			select {} // never returns
		}, "none ready within 50ms"},
		{"open fails", func(*oto.NewContextOptions) (*oto.Context, chan struct{}, error) {
			return nil, nil, errors.New(`oto: ALSA error at snd_pcm_open: "default": No such file or directory`)
		}, "no audio output device: oto: ALSA error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := startAudioOutput(50*time.Millisecond, tc.make)
			changed := make(chan AudioStatus, 4)
			o.OnChange(func(s AudioStatus) { changed <- s })
			st := o.Status()
			if st.State == AudioOpening {
				select {
				case st = <-changed:
				case <-time.After(5 * time.Second):
					t.Fatal("no status within 5 s")
				}
			}
			if st.State != AudioUnavailable || !strings.Contains(st.Message, tc.want) {
				t.Fatalf("status %+v, want unavailable with %q", st, tc.want)
			}
			if o.context() != nil {
				t.Fatal("an unavailable output gave a context")
			}
			// Playing then says why, and a live take has no stream.
			p := newPlayback(o)
			if err := p.play(1, []float32{0.1}, 0); err == nil || !strings.Contains(err.Error(), "no audio output device") {
				t.Fatalf("play without a card: %v", err)
			}
			if p.liveStream(1) != nil {
				t.Fatal("a live stream without a card")
			}
		})
	}
}

// Starting the output never waits for the device: it returns while the
// device's context is still being made (here until the test ends), its
// status Opening. A start that waited would not return at all.
func TestAudioOutputStartDoesNotWait(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan *AudioOutput, 1)
	go func() {
		started <- startAudioOutput(time.Hour, func(*oto.NewContextOptions) (*oto.Context, chan struct{}, error) {
			<-release
			return nil, nil, errors.New("released by the test")
		})
	}()
	select {
	case o := <-started:
		if st := o.Status(); st.State != AudioOpening {
			t.Fatalf("status %+v while the device is being opened, want opening", st)
		}
	case <-time.After(time.Minute):
		t.Fatal("startAudioOutput waited for the device")
	}
}
