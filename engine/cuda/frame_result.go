package cuda

import (
	"fmt"
	"math"
	"strings"

	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// This file is the host side of the frame control block (kernels/
// frame_control.cuh, struct FrameControl; its layout in frame_control.go,
// generated from the header): a take's sampling settings, the
// frame and row counters, forced codes, and the frame's result, as 32-bit
// words in device memory. The kernels read everything that changes between
// frames from it, so a frame captured once as a graph replays for any
// setting; the host writes settings before a take and reads the result words
// once per frame.

// FrameResultOffset and FrameResultBytes locate a frame's result in the
// control block (codes, end of speech, error bits): the bytes to copy to
// pinned host memory once per frame.
const (
	FrameResultOffset = fcCodes * 4
	FrameResultBytes  = (frameCtrlWords - fcCodes) * 4
)

// frameControl is the host image of a control block.
type frameControl [frameCtrlWords]uint32

// newFrameControl returns the control block of a take's start: settings
// validated, counters at zero (rows: the tower rows already done), nothing
// forced.
func newFrameControl(s sampling.Settings, seed uint64, rows int) (frameControl, error) {
	var c frameControl
	if err := s.Validate(); err != nil {
		return c, err
	}
	key := drama3.DrawKey(seed)
	c[fcSeedLo], c[fcSeedHi] = key[0], key[1]
	c[fcTemperature] = math.Float32bits(s.Temperature)
	c[fcTopP] = math.Float32bits(s.TopP)
	c[fcTopK] = uint32(int32(s.TopK))
	c[fcPos] = uint32(rows)
	return c, nil
}

// FrameResult is what a frame drew.
type FrameResult struct {
	Codes []int  // codebook 0 first; codebook 0 is the end index when End
	End   bool   // codebook 0 drew end of speech
	Error uint32 // error bits (Err says what they mean), gathered since the take began
}

// decodeFrameResult reads the result words (FrameResultBytes from
// FrameResultOffset) of a frame with ncb codebooks.
func decodeFrameResult(words []uint32, ncb int) FrameResult {
	r := FrameResult{Codes: make([]int, ncb)}
	for i := range r.Codes {
		r.Codes[i] = int(int32(words[i]))
	}
	r.End = words[fcEnd-fcCodes] != 0
	r.Error = words[fcError-fcCodes]
	return r
}

// Err describes the error bits, nil when there are none.
func (r FrameResult) Err() error {
	if r.Error == 0 {
		return nil
	}
	var parts []string
	if r.Error&frameErrKVFull != 0 {
		parts = append(parts, "a row past the tower's KV cache capacity")
	}
	if r.Error&frameErrBadCode != 0 {
		parts = append(parts, "a code outside its codebook reached an embedding")
	}
	for c := 0; c < frameMaxCodebooks; c++ {
		if r.Error&(1<<c) != 0 {
			parts = append(parts, fmt.Sprintf("codebook %d's logits are not all finite (the model produced a non-finite value)", c))
		}
	}
	return fmt.Errorf("frame: %s", strings.Join(parts, "; "))
}
