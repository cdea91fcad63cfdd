package decode

import (
	"context"
	"errors"
	"fmt"
	"math"

	"proscenium/engine/audio/pcm"
	"proscenium/engine/audio/resample"
)

// Limits on a reference recording (a voice to clone). The S2 reference code
// takes a few seconds to half a minute; longer references cost prompt rows
// (21.5 a second) and encoder time without helping.
const (
	MinReferenceSeconds = 2.0
	MaxReferenceSeconds = 30.0
	// silentPeak is −60 dBFS: a reference whose loudest sample is below it
	// carries no voice.
	silentPeak = 1e-3
)

// Errors a reference can fail with (wrapped, with the figures).
var (
	ErrTooShort = errors.New("the reference is too short")
	ErrSilent   = errors.New("the reference is silent")
)

// Reference is a recording ready for the codec encoder: mono, 44.1 kHz.
type Reference struct {
	Samples        []float32 // mono at pcm.SampleRate
	Format         Format
	SourceRate     int
	SourceChannels int
}

// Seconds is the reference's duration.
func (r *Reference) Seconds() float64 { return float64(len(r.Samples)) / pcm.SampleRate }

// ReadReference is ReadReferenceContext without a deadline of its own.
func ReadReference(b []byte) (*Reference, error) {
	return ReadReferenceContext(context.Background(), b)
}

// ReadReferenceContext decodes a reference recording (WAV, FLAC, MP3 or Ogg
// Opus), mixes it to mono by averaging the channels and resamples it to
// 44.1 kHz with libsoxr (the resampler of the speech API's sample_rate). It
// refuses a file it cannot read, one beyond the decoder's limits
// (ErrLimit), one shorter than MinReferenceSeconds or longer than
// MaxReferenceSeconds (decoding stops there), and a silent one.
//
// It takes one of a bounded pool of decoding slots (waiting up to 30 s or
// ctx's end, then ErrBusy), and decodes in a child process with an
// address-space and a wall-clock limit when the program serves one
// (ServeWorkerIfAsked).
func ReadReferenceContext(ctx context.Context, b []byte) (*Reference, error) {
	release, err := acquireSlot(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot read the reference: %w", err)
	}
	defer release()
	if isolate.Load() {
		return readReferenceIsolated(ctx, b)
	}
	return readReferenceInProcess(b)
}

// readReferenceInProcess is the decoding itself (in the child, or in a
// program that serves none).
func readReferenceInProcess(b []byte) (*Reference, error) {
	pcm, f, err := Decode(b, MaxReferenceSeconds+1)
	if err == nil && pcm.Seconds() > MaxReferenceSeconds {
		err = fmt.Errorf("%w: %.1f s", ErrTooLong, pcm.Seconds())
	}
	if err != nil && !errors.Is(err, ErrTooLong) {
		return nil, fmt.Errorf("cannot read the reference: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("the reference is longer than %g s (%w): trim it", MaxReferenceSeconds, err)
	}
	return referenceFromPCM(pcm, f)
}

func referenceFromPCM(decoded *PCM, f Format) (*Reference, error) {
	if d := decoded.Seconds(); d < MinReferenceSeconds {
		return nil, fmt.Errorf("%w: %.2f s, at least %g s are needed", ErrTooShort, d, MinReferenceSeconds)
	}
	mono := decoded.Mono()
	var peak float64
	for _, v := range mono {
		peak = math.Max(peak, math.Abs(float64(v)))
	}
	if peak < silentPeak {
		db := math.Inf(-1)
		if peak > 0 {
			db = 20 * math.Log10(peak)
		}
		return nil, fmt.Errorf("%w: its loudest sample is at %.0f dBFS", ErrSilent, db)
	}
	ref := &Reference{Samples: mono, Format: f, SourceRate: decoded.Rate, SourceChannels: decoded.Channels}
	if decoded.Rate != pcm.SampleRate {
		r, err := resample.New(decoded.Rate, pcm.SampleRate)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		head, err := r.Process(mono)
		if err != nil {
			return nil, err
		}
		out := append([]float32(nil), head...)
		tail, err := r.Flush()
		if err != nil {
			return nil, err
		}
		ref.Samples = append(out, tail...)
	}
	return ref, nil
}
