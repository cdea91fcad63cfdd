//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"proscenium/engine/cuda/kernel"
)

// CodecStream decodes one take on the device, chunk by chunk, on a CUDA
// stream of its own (so the codec's work overlaps the backbone's on the
// device's main stream). Each stage keeps the inputs its history reads (see
// codec_stages_cuda.go); every chunk costs only its own frames, and the
// samples are bit-identical to one whole decode on the GPU whatever the
// chunking (the device tests check it). A stream serves one goroutine.
type CodecStream struct {
	c         *Codec
	q         codecQueue
	maxChunk  int        // frames per Push at most
	frames    int        // next frame's absolute index
	first     int        // the take's frame this stream started at (NewStreamAt)
	hist32    []*Block   // per stage: FP32 input rows before the chunk (nil: none)
	hists     [][]*Block // per stage: the stage's own histories
	x         [2]*Block  // FP32 stage inputs and outputs, ping-pong
	a16, b16  *Block     // FP16 GEMM inputs
	qkv       *Block     // FP32 q, k, v of a layer, with W−1 rows of history
	codes     *Block     // int32 codes of a chunk
	hostCodes *Block     // pinned staging for codes and samples
	hostPCM   *Block
	scratch   []*Block // the blocks a chunk may leave anything in (tests poison them)
	owned     []*Block
	done      cu.Event
	broken    error // a device error mid-chunk: the histories are undefined
	pending   bool
	pendN     int
	// tap, when set, sees each stage group's output (whole decodes: the
	// debug driver's z_post and z_up); it runs on the device thread after
	// the chunk's work up to that stage finished.
	tap func(label string, data []float32, rows, ch int)
	// marks, when set, are recorded after the RVQ sum and after each stage
	// (StageTimes).
	marks []cu.Event
}

// NewStream starts a take at frame 0; each Push may carry up to maxChunk
// frames (a whole decode is one stream with maxChunk = the take's frames).
func (c *Codec) NewStream(maxChunk int) (*CodecStream, error) { return c.NewStreamAt(0, maxChunk) }

// NewStreamAt starts decoding at frame first with no history: the samples of
// frames ≥ first + HistoryFrames equal those of a stream from frame 0 (the
// receptive field), bit for bit; earlier ones are not meaningful. It serves
// the stateless chunk decode of the debug driver.
func (c *Codec) NewStreamAt(first, maxChunk int) (*CodecStream, error) {
	if maxChunk < 1 {
		return nil, fmt.Errorf("cuda codec: chunk of %d frames", maxChunk)
	}
	if first < 0 {
		return nil, fmt.Errorf("cuda codec: stream starting at frame %d", first)
	}
	s := &CodecStream{c: c, maxChunk: maxChunk, frames: first, first: first}
	if err := s.allocate(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *CodecStream) alloc(bytes int, scratch bool) (*Block, error) {
	b, err := s.c.dev.Alloc(int64(max(bytes, 4)))
	if err != nil {
		return nil, err
	}
	s.owned = append(s.owned, b)
	if scratch {
		s.scratch = append(s.scratch, b)
	}
	return b, nil
}

func (s *CodecStream) allocate() error {
	c := s.c
	var need codecNeed
	xMax := s.maxChunk * c.geom.Latent
	rows := s.maxChunk
	for _, st := range c.stages {
		need.max(st.need(rows))
		xMax = max(xMax, (st.hist32()+rows)*st.inCh())
		rows *= st.up()
		xMax = max(xMax, rows*st.outCh())
		var h *Block
		if n := st.hist32(); n > 0 {
			var err error
			if h, err = s.alloc(n*st.inCh()*4, false); err != nil {
				return err
			}
		}
		s.hist32 = append(s.hist32, h)
		var hs []*Block
		for _, n := range st.histories() {
			var b *Block
			if n > 0 {
				var err error
				if b, err = s.alloc(n, false); err != nil {
					return err
				}
			}
			hs = append(hs, b)
		}
		s.hists = append(s.hists, hs)
	}
	var err error
	for i := range s.x {
		if s.x[i], err = s.alloc(xMax*4, true); err != nil {
			return err
		}
	}
	if s.a16, err = s.alloc(need.a16*2, true); err != nil {
		return err
	}
	if s.b16, err = s.alloc(need.b16*2, true); err != nil {
		return err
	}
	if s.qkv, err = s.alloc(need.qkv*4, true); err != nil {
		return err
	}
	nb := c.geom.Codebooks()
	if s.codes, err = s.alloc(s.maxChunk*nb*4, true); err != nil {
		return err
	}
	if s.hostCodes, err = s.c.dev.AllocPinned(int64(s.maxChunk * nb * 4)); err != nil {
		return err
	}
	s.owned = append(s.owned, s.hostCodes)
	if s.hostPCM, err = s.c.dev.AllocPinned(int64(s.maxChunk * c.geom.SamplesPerFrame * 4)); err != nil {
		return err
	}
	s.owned = append(s.owned, s.hostPCM)
	return c.dev.Do(func() error {
		if s.q.s, err = cu.MakeStream(cu.NonBlocking); err != nil {
			return fmt.Errorf("cuda codec: stream: %w", err)
		}
		s.q.d = c.dev
		if s.done, err = cu.MakeEvent(cu.DisableTiming); err != nil {
			return fmt.Errorf("cuda codec: event: %w", err)
		}
		// Histories start as the zero padding before the take.
		for _, b := range s.owned {
			if b.Kind == DeviceMem {
				if err := cu.MemsetD32Async(cu.DevicePtr(b.Ptr), 0, b.Bytes/4, s.q.s); err != nil {
					return err
				}
			}
		}
		return s.q.s.Synchronize()
	})
}

// Frames is the absolute index of the next frame to push.
func (s *CodecStream) Frames() int { return s.frames }

// Close waits for the stream's work and frees its state.
func (s *CodecStream) Close() {
	d := s.c.dev
	d.Do(func() error {
		if s.q.s != (cu.Stream{}) {
			s.q.s.Synchronize()
			s.q.s.Destroy()
			s.q.s = cu.Stream{}
		}
		if s.done != (cu.Event{}) {
			cu.DestroyEvent(&s.done)
			s.done = cu.Event{}
		}
		for _, b := range s.owned {
			b.Free()
		}
		return nil
	})
	s.owned, s.scratch = nil, nil
}

// Push decodes the next frames (frame-major codes, Codebooks() per frame)
// and returns their samples. A refused chunk (bad codes, more frames than
// the stream holds) changes nothing; after a device error the stream is
// unusable (its histories are undefined) and says so.
func (s *CodecStream) Push(codes []int32) ([]float32, error) {
	p, err := s.Enqueue(codes)
	if err != nil {
		return nil, err
	}
	return p.Wait()
}

// CodecPending is a chunk in flight.
type CodecPending struct{ s *CodecStream }

// Enqueue puts the next chunk's work on the stream and returns at once; Wait
// collects its samples. One chunk at a time: Wait before the next Enqueue.
func (s *CodecStream) Enqueue(codes []int32) (*CodecPending, error) {
	c := s.c
	nb := c.geom.Codebooks()
	if s.broken != nil {
		return nil, fmt.Errorf("cuda codec: stream unusable after an earlier error: %w", s.broken)
	}
	if s.pending {
		return nil, errors.New("cuda codec: the previous chunk was not collected (Wait)")
	}
	if len(codes) == 0 || len(codes)%nb != 0 {
		return nil, fmt.Errorf("codec: %d codes is not a whole, non-zero number of %d-code frames", len(codes), nb)
	}
	n := len(codes) / nb
	if n > s.maxChunk {
		return nil, fmt.Errorf("cuda codec: chunk of %d frames, the stream holds %d", n, s.maxChunk)
	}
	if s.frames+n > 327680 {
		return nil, fmt.Errorf("codec: frame %d is past the reference's RoPE table of 327680 frames", s.frames+n-1)
	}
	for i, v := range codes {
		if v < 0 {
			return nil, fmt.Errorf("codec: frame %d codebook %d: negative code %d", s.frames+i/nb, i%nb, v)
		}
	}
	copy(unsafe.Slice((*int32)(s.hostCodes.Host), len(codes)), codes)
	if err := c.dev.Do(func() error { return s.enqueue(n) }); err != nil {
		s.broken = err
		return nil, err
	}
	s.pending, s.pendN = true, n
	s.frames += n
	return &CodecPending{s}, nil
}

// enqueue runs on the device thread.
func (s *CodecStream) enqueue(n int) error {
	c, q := s.c, &s.q
	nb := c.geom.Codebooks()
	if err := cu.MemcpyHtoDAsync(cu.DevicePtr(s.codes.Ptr), s.hostCodes.Host, int64(n*nb*4), q.s); err != nil {
		return err
	}
	r := &codecRun{q: q, a16: s.a16.Ptr, b16: s.b16.Ptr, qkv: s.qkv.Ptr}
	cur := 0
	off := func(i int) uintptr { // where stage i's input chunk starts in its buffer
		if i >= len(c.stages) {
			return 0
		}
		st := c.stages[i]
		return uintptr(st.hist32() * st.inCh() * 4)
	}
	g := &c.rvq
	if err := kernel.CodecRVQF32(q, [3]int{n, 1, 1}, 256, kernel.Ptr(s.x[cur].Ptr+off(0)), devPtr(s.codes), g.books, g.dim, c.geom.Latent, devPtr(g.cb), devPtr(g.cbOff), devPtr(g.sizes), devPtr(g.projW), devPtr(g.projB)); err != nil {
		return err
	}
	if err := s.tapOut("rvq", s.x[cur].Ptr+off(0), n, c.geom.Latent); err != nil {
		return err
	}
	if err := s.mark(0); err != nil {
		return err
	}
	rows, rate := n, 1
	for i, st := range c.stages {
		base := s.x[cur].Ptr
		h := st.hist32()
		rowBytes := st.inCh() * 4
		if h > 0 {
			if err := q.copy(base, s.hist32[i].Ptr, h*rowBytes); err != nil {
				return err
			}
		}
		pos := (s.frames) * rate
		if err := st.run(r, s.hists[i], base+uintptr(h*rowBytes), s.x[1-cur].Ptr+off(i+1), rows, pos); err != nil {
			return err
		}
		if h > 0 {
			if err := q.copy(s.hist32[i].Ptr, base+uintptr(rows*rowBytes), h*rowBytes); err != nil {
				return err
			}
		}
		if err := s.mark(i + 1); err != nil {
			return err
		}
		cur = 1 - cur
		rows *= st.up()
		rate *= st.up()
		if s.tap != nil && (i+1 == len(c.stages) || c.stages[i+1].base().label != st.base().label) {
			if err := s.tapOut(st.base().label, s.x[cur].Ptr+off(i+1), rows, st.outCh()); err != nil {
				return err
			}
		}
	}
	if err := cu.MemcpyDtoHAsync(s.hostPCM.Host, cu.DevicePtr(s.x[cur].Ptr), int64(rows*4), q.s); err != nil {
		return err
	}
	return s.done.Record(q.s)
}

func (s *CodecStream) mark(i int) error {
	if s.marks == nil {
		return nil
	}
	return s.marks[i].Record(s.q.s)
}

// CodecStageTime is one stage's device time in a chunk.
type CodecStageTime struct {
	Stage string  `json:"stage"` // index, label and kind
	Ms    float64 `json:"ms"`    // device milliseconds
}

// StageTimes pushes a chunk like Push and returns the device time of each
// stage (events between stages; the benchmark's breakdown).
func (s *CodecStream) StageTimes(codes []int32) ([]CodecStageTime, error) {
	n := len(s.c.stages) + 1
	err := s.c.dev.Do(func() error {
		s.marks = make([]cu.Event, n)
		for i := range s.marks {
			var err error
			if s.marks[i], err = cu.MakeEvent(cu.DefaultEvent); err != nil {
				return err
			}
		}
		return nil
	})
	defer s.c.dev.Do(func() error {
		for i := range s.marks {
			cu.DestroyEvent(&s.marks[i])
		}
		s.marks = nil
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := s.Push(codes); err != nil {
		return nil, err
	}
	var out []CodecStageTime
	err = s.c.dev.Do(func() error {
		for i, st := range s.c.stages {
			ms, err := s.marks[i].Elapsed(s.marks[i+1])
			if err != nil {
				return err
			}
			out = append(out, CodecStageTime{Stage: fmt.Sprintf("%2d %s %T", i, st.base().label, st), Ms: ms})
		}
		return nil
	})
	return out, err
}

// tapOut hands a stage output to the tap (synchronously).
func (s *CodecStream) tapOut(label string, p uintptr, rows, ch int) error {
	if s.tap == nil {
		return nil
	}
	if err := s.q.s.Synchronize(); err != nil {
		return err
	}
	v := make([]float32, rows*ch)
	if err := cu.MemcpyDtoH(unsafe.Pointer(&v[0]), cu.DevicePtr(p), int64(len(v)*4)); err != nil {
		return err
	}
	s.tap(label, v, rows, ch)
	return nil
}

// Ready reports, without waiting, whether the chunk has finished on the
// device (or failed: Wait then returns the error).
func (p *CodecPending) Ready() bool {
	s := p.s
	if !s.pending {
		return true
	}
	var err error
	s.c.dev.Do(func() error { err = s.done.Query(); return nil })
	return !errors.Is(err, cu.NotReady)
}

// Wait blocks until the chunk's samples are on the host and returns them.
// It polls the stream's event, leaving the device thread free for other
// work meanwhile.
func (p *CodecPending) Wait() ([]float32, error) {
	s := p.s
	if !s.pending {
		return nil, errors.New("cuda codec: nothing pending")
	}
	for {
		var err error
		s.c.dev.Do(func() error { err = s.done.Query(); return nil })
		if err == nil {
			break
		}
		if !errors.Is(err, cu.NotReady) {
			s.pending = false
			s.broken = err
			return nil, fmt.Errorf("cuda codec: %w", err)
		}
		time.Sleep(20 * time.Microsecond)
	}
	s.pending = false
	n := s.pendN * s.c.geom.SamplesPerFrame
	out := make([]float32, n)
	copy(out, unsafe.Slice((*float32)(s.hostPCM.Host), n))
	return out, nil
}

// poison fills every scratch buffer with NaN (tests: a chunk must not read
// anything it did not write, bar the histories).
func (s *CodecStream) poison() error {
	return s.c.dev.Do(func() error {
		for _, b := range s.scratch {
			if err := cu.MemsetD32Async(cu.DevicePtr(b.Ptr), 0x7fc07fc0, b.Bytes/4, s.q.s); err != nil {
				return err
			}
		}
		return nil
	})
}

// wholeStream opens a stream of every frame of codes (frame-major).
func (c *Codec) wholeStream(codes []int32) (*CodecStream, error) {
	nf := len(codes) / c.geom.Codebooks()
	if nf == 0 {
		return nil, fmt.Errorf("codec: %d codes is not a whole, non-zero number of %d-code frames", len(codes), c.geom.Codebooks())
	}
	return c.NewStream(nf)
}

// Decode decodes every frame of codes (frame-major) at once: one stream,
// one chunk. It is the whole decode the streams are checked against.
func (c *Codec) Decode(codes []int32) ([]float32, error) {
	s, err := c.wholeStream(codes)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Push(codes)
}

// CodecStages are a whole decode's stage outputs, channel-major as the
// reference lays them out (as cpu.CodecStages).
type CodecStages struct {
	ZRVQ, ZPost, ZUp, PCM []float32
}

// DecodeStages decodes every frame of codes and also returns the stage
// outputs (the debug driver's --stages).
func (c *Codec) DecodeStages(codes []int32) (*CodecStages, error) {
	s, err := c.wholeStream(codes)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	st := &CodecStages{}
	s.tap = func(label string, v []float32, rows, ch int) {
		cm := make([]float32, len(v))
		for t := 0; t < rows; t++ {
			for k := 0; k < ch; k++ {
				cm[k*rows+t] = v[t*ch+k]
			}
		}
		switch label {
		case "rvq":
			st.ZRVQ = cm
		case "post":
			st.ZPost = cm
		case "upsample":
			st.ZUp = cm
		}
	}
	if st.PCM, err = s.Push(codes); err != nil {
		return nil, err
	}
	return st, nil
}
