package drama3

import "fmt"

// This file keeps the codec off the frame loop's critical path: with a
// backend whose codec runs apart from its frames (a GPU codec on its own
// stream), a chunk is started on the codec and collected after the next
// frame, so the device makes that frame while the codec decodes, and the
// loop waits for the codec only when it needs the PCM. The first chunk still
// decodes at once, for the earliest audio.

// AsyncDecoder is a FrameBackend whose codec runs apart from its frames.
// DecodeStart puts frames [from, to) on the codec and returns at once;
// DecodeCollect waits for that chunk and returns its PCM, exactly what
// Decode(from, to) returns. One chunk is in flight at a time: DecodeCollect
// before the next DecodeStart. Frame may be called in between.
type AsyncDecoder interface {
	DecodeStart(from, to int) error
	DecodeCollect() ([]float32, error)
}

// audioOut hands a take's chunks to the listener in order, decoding them
// at once or (an AsyncDecoder, every chunk but the first) one frame later.
type audioOut struct {
	b       FrameBackend
	async   AsyncDecoder // nil: every chunk at once
	timed   func(stage string, f func() error) error
	deliver func(from, to int, pcm []float32)

	pending  bool // a chunk [from, to) is on the codec
	from, to int
}

func newAudioOut(b FrameBackend, timed func(string, func() error) error, deliver func(from, to int, pcm []float32)) *audioOut {
	o := &audioOut{b: b, timed: timed, deliver: deliver}
	o.async, _ = b.(AsyncDecoder)
	return o
}

// chunk decodes frames [from, to): the chunk in flight is collected first.
func (o *audioOut) chunk(from, to int) error {
	if err := o.collect(); err != nil {
		return err
	}
	if o.async == nil || from == 0 {
		var pcm []float32
		if err := o.timed(StageCodec, func() (err error) {
			pcm, err = o.b.Decode(from, to)
			return err
		}); err != nil {
			return fmt.Errorf("decode frames [%d, %d): %w", from, to, err)
		}
		o.deliver(from, to, pcm)
		return nil
	}
	if err := o.timed(StageCodec, func() error { return o.async.DecodeStart(from, to) }); err != nil {
		return fmt.Errorf("decode frames [%d, %d): %w", from, to, err)
	}
	o.pending, o.from, o.to = true, from, to
	return nil
}

// collect waits for the chunk in flight, if any, and delivers it.
func (o *audioOut) collect() error {
	if !o.pending {
		return nil
	}
	o.pending = false
	var pcm []float32
	if err := o.timed(StageCodec, func() (err error) {
		pcm, err = o.async.DecodeCollect()
		return err
	}); err != nil {
		return fmt.Errorf("decode frames [%d, %d): %w", o.from, o.to, err)
	}
	o.deliver(o.from, o.to, pcm)
	return nil
}
