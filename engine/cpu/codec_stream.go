package cpu

import "fmt"

// CodecStream decodes a take frame by frame, keeping for each stage the last
// inputs its history reads (a transformer layer's W−1 rows, a conv's (K−1)·d
// samples), so that each chunk costs only its own frames. Every output element
// is computed once, by the same code and in the same order as a whole decode:
// the concatenated output is bit-identical to Decode over the whole take (the
// tests check it for every chunk policy). Decode(codes, from, to) remains the
// stateless form, which recomputes the receptive field.
type CodecStream struct {
	c      *Codec
	frames int           // frames decoded so far
	tails  []codecSignal // tails[i]: the last history() inputs of stage i, owned
	ws     CodecScratch
}

// NewStream starts a take.
func (c *Codec) NewStream() *CodecStream {
	return &CodecStream{c: c, tails: make([]codecSignal, len(c.stages))}
}

// Frames is the number of frames decoded so far.
func (s *CodecStream) Frames() int { return s.frames }

// Push decodes the next frames of the take (frame-major codes, Codebooks()
// per frame) and returns their samples. On error nothing changes.
func (s *CodecStream) Push(codes []int32) ([]float32, error) {
	c := s.c
	nb := c.geom.Codebooks()
	if len(codes) == 0 || len(codes)%nb != 0 {
		return nil, fmt.Errorf("codec: %d codes is not a whole, non-zero number of %d-code frames", len(codes), nb)
	}
	a, b := s.frames, s.frames+len(codes)/nb
	if b > codecMaxFrames {
		return nil, fmt.Errorf("codec: frame %d is past the reference's RoPE table of %d frames", b-1, codecMaxFrames)
	}
	if err := c.checkCodes(codes, a); err != nil {
		return nil, err
	}
	x := c.rvq(codes, a, a, b, &s.ws)
	for i, st := range c.stages {
		in := x
		if t := s.tails[i]; t.n > 0 {
			in = s.ws.signal(t.start, t.n+x.n, x.ch)
			copy(in.data, t.data)
			copy(in.data[len(t.data):], x.data)
			s.ws.release(x)
		}
		y := st.run(in, x.start*st.up(), &s.ws)
		if y.start != x.start*st.up() || y.end() != x.end()*st.up() {
			panic(fmt.Sprintf("codec stream: stage %d (%s) made [%d, %d), want [%d, %d)", i, st.label(), y.start, y.end(), x.start*st.up(), x.end()*st.up()))
		}
		s.tails[i] = codecTail(s.tails[i], in, st.history())
		s.ws.release(in)
		x = y
	}
	pcm := make([]float32, x.n)
	copy(pcm, x.data)
	s.ws.release(x)
	s.frames = b
	return pcm, nil
}

// codecTail keeps the last h times of in, reusing old's storage.
func codecTail(old, in codecSignal, h int) codecSignal {
	n := min(h, in.n)
	t := codecSignal{start: in.end() - n, n: n, ch: in.ch}
	if cap(old.data) >= n*in.ch {
		t.data = old.data[:n*in.ch]
	} else {
		t.data = make([]float32, n*in.ch)
	}
	copy(t.data, in.data[(in.n-n)*in.ch:])
	return t
}
