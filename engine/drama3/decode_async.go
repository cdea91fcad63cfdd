package drama3

import "fmt"

// This file keeps the codec off the frame loop's critical path: with a
// backend whose codec runs apart from its frames (a GPU codec on its own
// stream), a chunk is started on the codec and collected after the next
// frame, so the device makes that frame while the codec decodes, and the
// loop waits for the codec only when it needs the PCM. A backend that can
// tell without waiting whether the chunk is done (DecodeReadier) has it
// collected after the first frame that finds it done instead: the loop
// waits for a chunk only when the next one is due or the take ends. The
// first chunk still decodes at once, for the earliest audio.

// AsyncDecoder is a FrameBackend whose codec runs apart from its frames.
// DecodeStart puts frames [from, to) on the codec and returns at once;
// DecodeCollect waits for that chunk and returns its PCM, exactly what
// Decode(from, to) returns. One chunk is in flight at a time: DecodeCollect
// before the next DecodeStart. Frame may be called in between.
type AsyncDecoder interface {
	DecodeStart(from, to int) error
	DecodeCollect() ([]float32, error)
}

// DecodeReadier is an AsyncDecoder that reports, without waiting, whether
// the chunk in flight has finished (or failed: DecodeCollect then says how).
type DecodeReadier interface {
	DecodeReady() bool
}

// TakeDecodeReadier is DecodeReadier per take of a TakeAsyncDecoder.
type TakeDecodeReadier interface {
	DecodeReady(id TakeID) bool
}

// audioOut hands a take's chunks to the listener in order, decoding them
// at once or (an AsyncDecoder, every chunk but the first) behind the next
// frame: collected after it, or after the first frame that finds the chunk
// done when the backend can tell (ready).
type audioOut struct {
	decode  func(from, to int) ([]float32, error) // at once
	async   AsyncDecoder                          // nil: every chunk at once
	ready   func() bool                           // nil: a chunk is collected after the next frame
	timed   func(stage string, f func() error) error
	deliver func(from, to int, pcm []float32)

	pending  bool // a chunk [from, to) is on the codec
	from, to int
}

func newAudioOut(decode func(from, to int) ([]float32, error), async AsyncDecoder, ready func() bool, timed func(string, func() error) error, deliver func(from, to int, pcm []float32)) *audioOut {
	return &audioOut{decode: decode, async: async, ready: ready, timed: timed, deliver: deliver}
}

// TakeAsyncDecoder is a TakeSet whose takes' codecs run apart from their
// frames when DecodesAsync says so: AsyncDecoder per take.
type TakeAsyncDecoder interface {
	DecodesAsync() bool
	DecodeStart(id TakeID, from, to int) error
	DecodeCollect(id TakeID) ([]float32, error)
}

// takeAsync is take id's AsyncDecoder of a TakeAsyncDecoder set.
type takeAsync struct {
	set TakeAsyncDecoder
	id  TakeID
}

func (t takeAsync) DecodeStart(from, to int) error    { return t.set.DecodeStart(t.id, from, to) }
func (t takeAsync) DecodeCollect() ([]float32, error) { return t.set.DecodeCollect(t.id) }

// chunk decodes frames [from, to): the chunk in flight is collected first.
func (o *audioOut) chunk(from, to int) error {
	if err := o.collect(); err != nil {
		return err
	}
	if o.async == nil || from == 0 {
		var pcm []float32
		if err := o.timed(StageCodec, func() (err error) {
			pcm, err = o.decode(from, to)
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

// collectReady collects the chunk in flight if it is done, or if the
// backend cannot tell (then after the frame that follows its start).
func (o *audioOut) collectReady() error {
	if !o.pending || (o.ready != nil && !o.ready()) {
		return nil
	}
	return o.collect()
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
