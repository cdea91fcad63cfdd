package take

import (
	"context"
	"slices"
	"sync"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
)

// This file is the scheduler: one goroutine drives the backend's TakeSet for
// up to its capacity of takes together. A new take prefills between two
// steps and makes its first frame in the next one (the takes waiting at a
// step boundary begin in one TakeSet.BeginMany: a batched set prefills
// them together, so the last of several that arrive at once does not wait
// for the others' prefills); a take that ends (end of
// speech, max frames, its caller's stop) or fails leaves at once; the others
// go on. Each take keeps its own loop (drama3.TakeRun): seed, settings,
// voices, stream, stop and figures. Events go through a queue per take to
// the caller's goroutine, and a take joins the next step only once its
// caller has taken the last step's events: a slow listener holds up its own
// take alone (its codes do not depend on which steps it joins), and a
// caller that stops its take from a listener stops it within that frame.
// A set with a real-time bound (drama3.RealTimeBounded) gets fewer takes
// together than its places where more would make each slower than that
// (places). A prime (Engine.PrimeVoice: a voice's prefill into the voice
// cache, no frames) waits until no take is live or waiting, and ends at its
// begin.

// settleGrace is how long a step waits for the callers of live takes to take
// their last events before it runs without them.
const settleGrace = 2 * time.Millisecond

// gatherGrace is how long an idle scheduler (no take live) waits after a
// take arrives for others sent with it, while places are free: a client's
// concurrent requests reach the engine a few milliseconds apart, and begun
// together (one BeginMany: a joint prefill) none of them waits for
// another's prefill. A lone take pays it once, on its first audio.
const gatherGrace = 3 * time.Millisecond

// job is one take, waiting or live.
type job struct {
	ctx     context.Context
	arrived time.Time // when it was submitted
	run     *drama3.TakeRun
	events  eventQueue
	done    chan struct{} // closed when res or err is set
	res     *drama3.Result
	err     error
	stepped int // steps it made a frame in (the scheduler's goroutine alone)
	// prime: the job prefills its prompt into the voice cache and ends at
	// its begin (Engine.PrimeVoice); it begins only while no take is live
	// or waiting, and not at all when the set holds its voice by then
	// (held; found then set).
	prime bool
	held  func() bool
	found bool
}

// newJob is a job under ctx, its take not yet made.
func newJob(ctx context.Context) *job {
	return &job{ctx: ctx, done: make(chan struct{}), events: eventQueue{ready: make(chan struct{}, 1)}}
}

func (j *job) end(res *drama3.Result, err error) {
	j.res, j.err = res, err
	close(j.done)
}

// ended is a take that ended at a step: err says why it failed (nil: it
// finished).
type ended struct {
	j   *job
	err error
}

// scheduler admits jobs into the set and steps the live ones.
type scheduler struct {
	set drama3.TakeSet

	mu      sync.Mutex // guards the fields below
	pending []*job
	live    int // jobs begun in the set (Load)
	closed  bool
	nextID  drama3.TakeID

	wake    chan struct{} // a job arrived or Close was called (capacity 1)
	stopped chan struct{} // closed when run returns
	gather  time.Duration // gatherGrace (tests set their own; guarded by mu)

	// The real-time bound (run's alone): the set's (0: none), a frame's
	// audio, and the steps measured with n takes (index n; 0: none yet).
	bound float64
	frame time.Duration
	steps []time.Duration
}

// newScheduler drives set; frame is the audio a frame makes (the real-time
// bound's measure; 0: no bound).
func newScheduler(set drama3.TakeSet, frame time.Duration) *scheduler {
	s := &scheduler{set: set, wake: make(chan struct{}, 1), stopped: make(chan struct{}), gather: gatherGrace, frame: frame}
	if b, ok := set.(drama3.RealTimeBounded); ok {
		s.bound = b.RealTimeBound()
	}
	s.steps = make([]time.Duration, set.Capacity()+1)
	go s.run()
	return s
}

// places is how many waiting takes may join live ones: the set's free
// places, fewer under a real-time bound. There a take joins only while the
// step of the takes with it, as measured or predicted, stays within the
// bound of a frame's audio; before any step is measured one take begins
// alone, and its steps are the first measure.
func (s *scheduler) places(live int) int {
	free := s.set.Capacity() - live
	if s.bound <= 0 || s.frame <= 0 || free <= 0 {
		return free
	}
	limit := time.Duration(s.bound * float64(s.frame))
	n := 0
	for k := live + 1; k <= live+free; k++ {
		p, ok := s.predictStep(k)
		if !ok && k > 1 || ok && p > limit {
			break
		}
		n++
	}
	return n
}

// predictStep is the step of k takes: as measured, or scaled in proportion
// to the takes from the nearest measure below k (above it when there is
// none below); false when nothing is measured.
func (s *scheduler) predictStep(k int) (time.Duration, bool) {
	if s.steps[k] > 0 {
		return s.steps[k], true
	}
	for n := k - 1; n >= 1; n-- {
		if s.steps[n] > 0 {
			return s.steps[n] * time.Duration(k) / time.Duration(n), true
		}
	}
	for n := k + 1; n < len(s.steps); n++ {
		if s.steps[n] > 0 {
			return s.steps[n] * time.Duration(k) / time.Duration(n), true
		}
	}
	return 0, false
}

// firstSteps is how many steps of a take after its prefill do not measure
// the step: a set may make a take's first frame with its prefill and
// deliver it in the next step at no cost (cuda.TakeFrames), which would
// predict any number of takes within the bound.
const firstSteps = 2

// measured keeps the step of n takes (a moving average: a quarter of the
// latest), the real-time bound's measure.
func (s *scheduler) measured(n int, step time.Duration) {
	if s.bound <= 0 || n <= 0 || n >= len(s.steps) {
		return
	}
	if old := s.steps[n]; old > 0 {
		step = (3*old + step) / 4
	}
	s.steps[n] = step
}

// submit queues j; false when the scheduler is closed.
func (s *scheduler) submit(j *job) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	j.events.wake = s.poke
	j.arrived = time.Now()
	context.AfterFunc(j.ctx, s.poke) // a stopped take leaves at once
	s.pending = append(s.pending, j)
	s.poke()
	return true
}

// newID names the next take.
func (s *scheduler) newID() drama3.TakeID {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return s.nextID
}

func (s *scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// load is the takes live in the set and waiting for a place (primes are
// not takes: they do not count).
func (s *scheduler) load() (live, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.pending {
		if !j.prime {
			waiting++
		}
	}
	return s.live, waiting
}

// close stops admitting takes and waits until every admitted one has ended
// (their contexts end with the engine's, so they finish as cancels).
func (s *scheduler) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.poke()
	<-s.stopped
}

// gatherWaiting waits, while no take is live, until free jobs are waiting,
// the scheduler closes, or gather has passed since the first waiting job
// arrived (gatherGrace). It returns how many were waiting then: 0 when none
// was (or the scheduler closed with none).
func (s *scheduler) gatherWaiting(free int) int {
	for {
		s.mu.Lock()
		n, closed, grace := len(s.pending), s.closed, s.gather
		var first time.Time
		if n > 0 {
			first = s.pending[0].arrived
		}
		s.mu.Unlock()
		wait := time.Until(first.Add(grace))
		if n == 0 || n >= free || closed || wait <= 0 {
			return n
		}
		timer := time.NewTimer(wait)
		select {
		case <-s.wake: // another job, a stop or Close
		case <-timer.C:
		}
		timer.Stop()
	}
}

// admit takes the waiting jobs that fit: cancelled ones end at once (they
// never reach the set), the takes in arrival order while places are free,
// and, when idle (no take live) and no take waits or begins now, the primes
// in the places left: a prime never holds a take back, nor joins its begin.
func (s *scheduler) admit(free int, idle bool) []*job {
	s.mu.Lock()
	defer s.mu.Unlock()
	var in []*job
	takes := false // a take begins now or waits
	for _, j := range s.pending {
		switch {
		case j.ctx.Err() != nil:
			in = append(in, j)
		case j.prime:
		case free > 0:
			in = append(in, j)
			free--
			takes = true
		default:
			takes = true
		}
	}
	keep := s.pending[:0]
	for _, j := range s.pending {
		switch {
		case slices.Contains(in, j):
		case j.prime && idle && !takes && free > 0:
			in = append(in, j)
			free--
		default:
			keep = append(keep, j)
		}
	}
	clear(s.pending[len(keep):])
	s.pending = keep
	return in
}

func (s *scheduler) setLive(n int) {
	s.mu.Lock()
	s.live = n
	s.mu.Unlock()
}

// run is the scheduler's goroutine.
func (s *scheduler) run() {
	defer close(s.stopped)
	var live []*job
	var grace time.Time // the step waits for callers until then
	finish := func(j *job) { j.end(j.run.Finish()) }
	fail := func(j *job, err error) {
		j.run.Fail()
		j.end(nil, err)
	}
	for {
		// The takes waiting at this step boundary begin together: one
		// BeginMany, which a batched set runs as joint prefill passes.
		// With none live, those sent with the first are gathered first.
		if len(live) == 0 && s.gatherWaiting(s.set.Capacity()) == 0 {
			// None was waiting: admit none now. A take that arrives
			// between that look and admit would otherwise begin alone,
			// before those sent with it (the gather test once hung so on
			// CI: its first take ran alone, the other two then waited for
			// a third); its arrival pokes wake, and the gathering starts
			// from it.
			s.mu.Lock()
			closed := s.closed
			s.live = 0 // the takes that ended at the last step
			s.mu.Unlock()
			if closed {
				return
			}
			<-s.wake
			continue
		}
		if in := s.admit(s.places(len(live)), len(live) == 0); len(in) > 0 {
			// A prime whose voice a take has cached meanwhile is done.
			in = slices.DeleteFunc(in, func(j *job) bool {
				if j.prime && j.ctx.Err() == nil && j.held() {
					j.found = true
					j.end(nil, nil)
					return true
				}
				return false
			})
			runs, ctxs := make([]*drama3.TakeRun, len(in)), make([]context.Context, len(in))
			for i, j := range in {
				runs[i], ctxs[i] = j.run, j.ctx
			}
			begun, errs := drama3.PrefillMany(s.set, runs, ctxs)
			for i, j := range in {
				switch {
				case errs[i] != nil:
					fail(j, errs[i])
				case !begun[i] || j.prime: // a prime's work ends with its begin
					finish(j)
				default:
					live = append(live, j)
				}
			}
		}
		// Takes whose caller stopped them or that reached max frames leave
		// before the step.
		// (The load leaves them first: a caller that has its finish sees
		// its take counted no more.)
		var leaving []*job // nil, no allocation, on the frames where none leaves
		kept := live[:0]
		for _, j := range live {
			if j.run.Due(j.ctx) {
				kept = append(kept, j)
			} else {
				leaving = append(leaving, j)
			}
		}
		clear(live[len(kept):])
		live = kept
		s.setLive(len(live))
		for _, j := range leaving {
			finish(j)
		}
		if len(live) == 0 {
			s.mu.Lock()
			idle, closed := len(s.pending) == 0, s.closed
			s.mu.Unlock()
			if idle && closed {
				return
			}
			if idle {
				<-s.wake
			}
			continue
		}

		var ready []*job // live takes whose callers have their last events
		stopped := false
		for _, j := range live {
			if j.events.settled() {
				// A caller that stopped its take from a listener did so
				// before its events settled, maybe after the check above:
				// it leaves at the top, not after one frame more.
				stopped = stopped || j.ctx.Err() != nil
				ready = append(ready, j)
			}
		}
		if stopped {
			continue
		}
		if len(ready) == 0 {
			<-s.wake // an event delivered, a stop, a new take or Close
			continue
		}
		if len(ready) < len(live) {
			// Callers take their events in microseconds: wait that long
			// for them, so the takes keep stepping together; a slower one
			// sits out this step.
			if grace.IsZero() {
				grace = time.Now().Add(settleGrace)
			}
			if wait := time.Until(grace); wait > 0 {
				timer := time.NewTimer(wait)
				select {
				case <-s.wake:
				case <-timer.C:
				}
				timer.Stop()
				continue
			}
		}
		grace = time.Time{}
		frames := make([]drama3.TakeFrame, len(ready))
		for i, j := range ready {
			frames[i] = j.run.NextFrame()
		}
		t0 := time.Now()
		if err := s.set.Step(frames); err != nil {
			live = slices.DeleteFunc(live, func(j *job) bool { return slices.Contains(ready, j) })
			s.setLive(len(live))
			for _, j := range ready {
				fail(j, err)
			}
			continue
		}
		step := time.Since(t0)
		settled := true // every take past its first steps: the step measures n takes
		for _, j := range ready {
			settled = settled && j.stepped >= firstSteps
			j.stepped++
		}
		if settled {
			s.measured(len(frames), step)
		}
		var left []ended // the takes that ended at this step, in its order (nil on most frames)
		for i, j := range ready {
			ok, err := j.run.Took(frames[i], step, len(frames))
			if err != nil || !ok {
				left = append(left, ended{j, err})
			}
		}
		if len(left) == 0 {
			continue
		}
		live = slices.DeleteFunc(live, func(j *job) bool {
			return slices.ContainsFunc(left, func(e ended) bool { return e.j == j })
		})
		s.setLive(len(live))
		for _, e := range left {
			if e.err != nil {
				fail(e.j, e.err)
			} else {
				finish(e.j)
			}
		}
	}
}

// eventQueue hands a take's events from the scheduler to its caller in
// order, without blocking the scheduler.
type eventQueue struct {
	mu     sync.Mutex
	events []api.Event
	busy   bool          // events pushed and not yet all emitted
	ready  chan struct{} // capacity 1: events were pushed
	wake   func()        // the scheduler's: the caller has emitted them
}

func (q *eventQueue) push(ev api.Event) {
	q.mu.Lock()
	q.events = append(q.events, ev)
	q.busy = true
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *eventQueue) drain() []api.Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.events
	q.events = nil
	return out
}

// settled reports whether every event pushed has been emitted.
func (q *eventQueue) settled() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.busy
}

// emitted marks the events drained so far as emitted and wakes the
// scheduler when none is left.
func (q *eventQueue) emitted() {
	q.mu.Lock()
	idle := len(q.events) == 0
	if idle {
		q.busy = false
	}
	q.mu.Unlock()
	if idle && q.wake != nil {
		q.wake()
	}
}

// deliver calls emit with j's events as they come until j has ended and
// every event has been delivered.
func (j *job) deliver(emit func(api.Event)) {
	for {
		select {
		case <-j.events.ready:
		case <-j.done:
			for _, ev := range j.events.drain() {
				emit(ev)
			}
			return
		}
		for _, ev := range j.events.drain() {
			emit(ev)
		}
		j.events.emitted()
	}
}
