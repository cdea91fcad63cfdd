// Package resample converts mono float32 audio between sample rates with
// libsoxr (the SoX resampler: band-limited, linear phase), chunk by chunk,
// so a take can be resampled while it streams.
package resample

// #cgo pkg-config: soxr
// #include <soxr.h>
// static soxr_t create(double in, double out, soxr_error_t *err) {
// 	soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
// 	soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
// 	return soxr_create(in, out, 1, err, &io, &q, NULL);
// }
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Resampler converts a stream from one rate to another. Its output is
// aligned with its input (soxr removes its own filter delay): after Flush,
// n input samples have become round(n·to/from) output samples.
type Resampler struct {
	s        C.soxr_t
	from, to int
	out      []float32
}

// New returns a resampler from rate from to rate to (Hz). SoX's "high
// quality": 20-bit precision, pass band to 91 % of the lower Nyquist
// frequency.
func New(from, to int) (*Resampler, error) {
	if from <= 0 || to <= 0 {
		return nil, fmt.Errorf("resample: rates must be positive, got %d → %d", from, to)
	}
	var cerr C.soxr_error_t
	s := C.create(C.double(from), C.double(to), &cerr)
	if cerr != nil {
		return nil, fmt.Errorf("soxr_create: %s", C.GoString(cerr))
	}
	return &Resampler{s: s, from: from, to: to}, nil
}

// Process resamples in and returns what soxr has ready (valid until the
// next call).
func (r *Resampler) Process(in []float32) ([]float32, error) {
	if len(in) == 0 {
		return r.out[:0], nil
	}
	return r.process(in, false)
}

// Flush returns the rest of the output once the input has ended.
func (r *Resampler) Flush() ([]float32, error) { return r.process(nil, true) }

func (r *Resampler) process(in []float32, flush bool) ([]float32, error) {
	if r.s == nil {
		return nil, errors.New("resample: closed")
	}
	r.out = r.out[:0]
	for {
		room := len(in)*r.to/r.from + 1024
		if cap(r.out)-len(r.out) < room {
			r.out = append(r.out, make([]float32, room)...)[:len(r.out)]
		}
		dst := r.out[len(r.out):cap(r.out)]
		out := C.soxr_out_t(unsafe.Pointer(&dst[0]))
		var idone, odone C.size_t
		var cerr C.soxr_error_t
		if flush { // a null input tells soxr the input has ended
			cerr = C.soxr_process(r.s, nil, 0, nil, out, C.size_t(len(dst)), &odone)
		} else {
			cerr = C.soxr_process(r.s, C.soxr_in_t(unsafe.Pointer(&in[0])), C.size_t(len(in)), &idone,
				out, C.size_t(len(dst)), &odone)
		}
		if cerr != nil {
			return nil, fmt.Errorf("soxr_process: %s", C.GoString(cerr))
		}
		r.out = r.out[:len(r.out)+int(odone)]
		if flush {
			if odone == 0 {
				return r.out, nil
			}
			continue
		}
		in = in[idone:]
		if len(in) == 0 {
			return r.out, nil
		}
	}
}

// Close frees the resampler.
func (r *Resampler) Close() {
	if r.s != nil {
		C.soxr_delete(r.s)
		r.s = nil
	}
}
