package decode

import (
	"errors"
	"fmt"
	"math"
)

// Limits on what a file may declare: a decoder refuses a stream beyond them
// before decoding a sample. A voice needs neither more than studio rates nor
// more than surround channels, and the budget below is proportional to both.
const (
	MaxRate     = 192000
	MaxChannels = 8
)

// ErrLimit is returned (wrapped, as a *LimitError) when a file declares a
// sample rate or channel count beyond MaxRate or MaxChannels.
var ErrLimit = errors.New("beyond the decoder's limits")

// LimitError names the declared property that is beyond its limit.
type LimitError struct {
	Field        string // "sample rate" or "channels"
	Value, Limit int
}

func (e *LimitError) Error() string {
	unit := ""
	if e.Field == "sample rate" {
		unit = " Hz"
	}
	return fmt.Sprintf("the file declares a %s of %d%s, more than the limit of %d%s", e.Field, e.Value, unit, e.Limit, unit)
}

func (e *LimitError) Unwrap() error { return ErrLimit }

// checkDeclared refuses a declared rate or channel count out of bounds.
func checkDeclared(rate, channels int) error {
	switch {
	case rate > MaxRate:
		return &LimitError{Field: "sample rate", Value: rate, Limit: MaxRate}
	case channels > MaxChannels:
		return &LimitError{Field: "channels", Value: channels, Limit: MaxChannels}
	case rate < 1 || channels < 1:
		return fmt.Errorf("the file declares %d channels at %d Hz", channels, rate)
	}
	return nil
}

// budget is the decoded-size limit of one decode, fixed from the declared
// rate and channels before the first sample: at most maxSeconds × rate
// frames of channels samples. Samples are counted as the decoder produces
// them and decoding stops at the limit, so a small file that declares or
// expands to hours of audio costs at most the budget.
type budget struct {
	pcm        PCM
	maxFrames  int
	maxSeconds float64
}

// initialFrames bounds the first allocation of a stream whose length is not
// declared: 10 s, grown by doubling up to the budget.
const initialSeconds = 10

// newBudget checks the declaration and allocates the sample buffer: the
// declared length (declaredFrames > 0) or 10 s, never more than the budget.
func newBudget(rate, channels int, declaredFrames int64, maxSeconds float64) (*budget, error) {
	if err := checkDeclared(rate, channels); err != nil {
		return nil, err
	}
	if maxSeconds <= 0 || math.IsNaN(maxSeconds) || maxSeconds > 3600 {
		return nil, fmt.Errorf("decode: a budget of %g s (give 0 < seconds ≤ 3600)", maxSeconds)
	}
	b := &budget{pcm: PCM{Rate: rate, Channels: channels}, maxSeconds: maxSeconds,
		maxFrames: int(math.Ceil(maxSeconds * float64(rate)))}
	n := int64(initialSeconds * rate)
	if declaredFrames > 0 {
		n = declaredFrames
	}
	n = min(n, int64(b.maxFrames))
	b.pcm.Samples = make([]float32, 0, int(n)*channels)
	return b, nil
}

// frames is how many frames are decoded so far.
func (b *budget) frames() int { return len(b.pcm.Samples) / b.pcm.Channels }

// take reserves n more frames, growing the buffer (by doubling, never past
// the budget), and returns the slice to fill with n·channels samples; past
// the budget it returns ErrTooLong and reserves nothing.
func (b *budget) take(n int) ([]float32, error) {
	if n < 0 || b.frames()+n > b.maxFrames {
		return nil, tooLong(b.maxSeconds)
	}
	need := len(b.pcm.Samples) + n*b.pcm.Channels
	if need > cap(b.pcm.Samples) {
		grown := min(max(2*cap(b.pcm.Samples), need), b.maxFrames*b.pcm.Channels)
		s := make([]float32, len(b.pcm.Samples), grown)
		copy(s, b.pcm.Samples)
		b.pcm.Samples = s
	}
	old := len(b.pcm.Samples)
	b.pcm.Samples = b.pcm.Samples[:need]
	return b.pcm.Samples[old:need], nil
}

// result is the decoded audio, its buffer trimmed to what was decoded when
// the declaration promised more.
func (b *budget) result() *PCM {
	if cap(b.pcm.Samples)-len(b.pcm.Samples) > len(b.pcm.Samples)/4 {
		b.pcm.Samples = append([]float32(nil), b.pcm.Samples...)
	}
	return &b.pcm
}

// tooLong is the error for a stream past maxSeconds.
func tooLong(maxSeconds float64) error {
	return fmt.Errorf("%w: more than %g s", ErrTooLong, maxSeconds)
}
