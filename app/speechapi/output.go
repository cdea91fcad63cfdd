package speechapi

import (
	"fmt"
	"io"

	"proscenium/engine/audio/encode"
	"proscenium/engine/audio/resample"
	"proscenium/engine/audio/stretch"
)

// output turns the engine's chunks into the reply's bytes: the time
// stretch (speed), then the resampler (sample_rate), then the encoder
// (response_format), each skipped when it would change nothing. Every stage
// streams, so a chunk's audio leaves as soon as the codec has framed it.
type output struct {
	st  *stretch.Stretcher  // nil at speed 1
	rs  *resample.Resampler // nil at the engine's rate
	enc encode.Encoder
	f   encode.Format
}

func newOutput(w io.Writer, req speechRequest, engineRate int) (*output, error) {
	o := &output{f: req.Format}
	var err error
	if req.Speed != 1 {
		if o.st, err = stretch.New(engineRate, req.Speed); err != nil {
			return nil, err
		}
	}
	if req.SampleRate != engineRate {
		if o.rs, err = resample.New(engineRate, req.SampleRate); err != nil {
			o.free()
			return nil, err
		}
	}
	if o.enc, err = encode.New(w, req.Format, req.SampleRate); err != nil {
		o.free()
		return nil, err
	}
	return o, nil
}

// write passes one chunk through.
func (o *output) write(pcm []float32) error {
	var err error
	if o.st != nil {
		if pcm, err = o.st.Process(pcm); err != nil {
			return err
		}
	}
	return o.resampleEncode(pcm)
}

func (o *output) resampleEncode(pcm []float32) error {
	var err error
	if o.rs != nil {
		if pcm, err = o.rs.Process(pcm); err != nil {
			return err
		}
	}
	return o.enc.Write(pcm)
}

// close flushes every stage (the take has ended) and frees them.
func (o *output) close() error {
	defer o.free()
	if o.st != nil {
		tail, err := o.st.Flush()
		if err != nil {
			return err
		}
		if err := o.resampleEncode(tail); err != nil {
			return err
		}
	}
	if o.rs != nil {
		tail, err := o.rs.Flush()
		if err != nil {
			return err
		}
		if err := o.enc.Write(tail); err != nil {
			return err
		}
	}
	if err := o.enc.Close(); err != nil {
		return fmt.Errorf("finishing the %s stream: %w", o.f, err)
	}
	o.enc = nil
	return nil
}

// free releases the libraries' state without flushing (a failed take).
func (o *output) free() {
	if o.st != nil {
		o.st.Close()
		o.st = nil
	}
	if o.rs != nil {
		o.rs.Close()
		o.rs = nil
	}
	if o.enc != nil {
		o.enc.Close()
		o.enc = nil
	}
}
