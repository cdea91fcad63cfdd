// Package stretch changes the speed of mono float32 audio without changing
// its pitch, with the Rubber Band library's real-time stretcher, chunk by
// chunk, so a take can be stretched while it streams. It uses the R2
// ("faster") engine: R3 ("finer") cost 70–120 ms of CPU per second of audio
// on the dev machine, past the 5 % of real time the API allows its audio
// processing (docs/PERF.md).
package stretch

// #cgo pkg-config: rubberband
// #include <rubberband/rubberband-c.h>
// static void process1(RubberBandState s, const float *in, unsigned int n, int final) {
// 	const float *chans[1] = {in};
// 	rubberband_process(s, chans, n, final);
// }
// static unsigned int retrieve1(RubberBandState s, float *out, unsigned int n) {
// 	float *chans[1] = {out};
// 	return rubberband_retrieve(s, chans, n);
// }
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// MinSpeed and MaxSpeed bound the speed factor (OpenAI's range for speed).
const (
	MinSpeed = 0.25
	MaxSpeed = 4.0
)

// block is the most samples handed to Rubber Band in one call.
const block = 4096

// Stretcher plays audio speed times faster (speed < 1: slower) at the same
// pitch. Its output is aligned with its input: the stretcher's start delay
// is dropped, so n input samples become about n/speed output samples.
type Stretcher struct {
	s       C.RubberBandState
	speed   float64
	skip    int // output samples still to drop (the start delay)
	in, n   int // input samples taken, output samples given
	out     []float32
	scratch []float32
}

// New returns a stretcher for audio at rate Hz.
func New(rate int, speed float64) (*Stretcher, error) {
	if !(speed >= MinSpeed && speed <= MaxSpeed) {
		return nil, fmt.Errorf("stretch: speed must be in [%v, %v], got %v", MinSpeed, MaxSpeed, speed)
	}
	if rate <= 0 {
		return nil, fmt.Errorf("stretch: rate must be positive, got %d", rate)
	}
	opts := C.RubberBandOptionProcessRealTime | C.RubberBandOptionEngineFaster |
		C.RubberBandOptionThreadingNever
	s := C.rubberband_new(C.uint(rate), 1, C.RubberBandOptions(opts), C.double(1/speed), 1)
	if s == nil {
		return nil, errors.New("rubberband_new failed")
	}
	C.rubberband_set_max_process_size(s, block)
	st := &Stretcher{s: s, speed: speed, skip: int(C.rubberband_get_start_delay(s))}
	// The library asks for this much silence first, so that the first real
	// sample is processed like every other one.
	if pad := int(C.rubberband_get_preferred_start_pad(s)); pad > 0 {
		zeros := make([]float32, pad)
		for len(zeros) > 0 {
			n := min(len(zeros), block)
			C.process1(s, (*C.float)(unsafe.Pointer(&zeros[0])), C.uint(n), 0)
			zeros = zeros[n:]
		}
	}
	return st, nil
}

// Process stretches in and returns the output ready so far (valid until the
// next call).
func (st *Stretcher) Process(in []float32) ([]float32, error) {
	if st.s == nil {
		return nil, errors.New("stretch: closed")
	}
	st.out = st.out[:0]
	st.in += len(in)
	for len(in) > 0 {
		n := min(len(in), block)
		C.process1(st.s, (*C.float)(unsafe.Pointer(&in[0])), C.uint(n), 0)
		in = in[n:]
		st.retrieve()
	}
	st.n += len(st.out)
	return st.out, nil
}

// Flush ends the input and returns the rest of the output: the real-time
// stretcher keeps its last window back, so silence is fed after the take
// until round(n/speed) samples are out, and the output is cut there.
func (st *Stretcher) Flush() ([]float32, error) {
	if st.s == nil {
		return nil, errors.New("stretch: closed")
	}
	st.out = st.out[:0]
	want := int(math.Round(float64(st.in) / st.speed))
	zeros := make([]float32, block)
	for i := 0; st.n+len(st.out) < want; i++ {
		if i > 64 { // 64 blocks of silence is far past any latency
			return nil, fmt.Errorf("stretch: %d of %d samples after the input ended", st.n+len(st.out), want)
		}
		C.process1(st.s, (*C.float)(unsafe.Pointer(&zeros[0])), block, 0)
		st.retrieve()
	}
	st.out = st.out[:max(0, want-st.n)]
	st.n += len(st.out)
	return st.out, nil
}

// retrieve appends what the library has ready to st.out, less the start
// delay.
func (st *Stretcher) retrieve() {
	for {
		avail := int(C.rubberband_available(st.s))
		if avail <= 0 {
			return
		}
		if cap(st.scratch) < avail {
			st.scratch = make([]float32, avail)
		}
		buf := st.scratch[:avail]
		got := int(C.retrieve1(st.s, (*C.float)(unsafe.Pointer(&buf[0])), C.uint(avail)))
		buf = buf[:got]
		drop := min(st.skip, len(buf))
		st.skip -= drop
		st.out = append(st.out, buf[drop:]...)
	}
}

// Close frees the stretcher.
func (st *Stretcher) Close() {
	if st.s != nil {
		C.rubberband_delete(st.s)
		st.s = nil
	}
}
