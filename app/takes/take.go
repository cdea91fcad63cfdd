package takes

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"proscenium/app/playback"
	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/engine/api"
	"proscenium/engine/drama3"
)

// Take states.
const (
	TakeRunning  = "running"
	TakeFinished = "finished" // Finish says why: stop, length or cancel
	TakeFailed   = "failed"   // Error says why
)

// maxTakeName caps a take's name (bytes).
const maxTakeName = 200

// progressEvery spaces take progress events: a fast GPU makes hundreds of
// frames a second, more than a UI needs to redraw.
const progressEvery = 100 * time.Millisecond

// Take is one entry of the takes list.
type Take struct {
	ID      int               `json:"id"`
	Name    string            `json:"name"`
	Request api.SpeechRequest `json:"request"`
	State   string            `json:"state"`
	Frames  int               `json:"frames"`     // frames made so far
	Finish  *api.Finish       `json:"finish"`     // set when finished
	Error   string            `json:"error"`      // set when failed
	Started int64             `json:"started_ms"` // Unix milliseconds
	// FramesPerSecond is the generation speed after the first frame (which
	// includes the prompt's prefill); 0 until two frames exist.
	FramesPerSecond float64 `json:"frames_per_s"`
	Samples         int     `json:"samples"`        // PCM samples held
	SampleRate      int     `json:"sample_rate_hz"` // of the PCM
	Underruns       int     `json:"underruns"`      // while playing live through the sound card
	Stored          bool    `json:"stored"`         // saved under the takes directory
	// Source says who asked for the take: SourceStudio or SourceAPI.
	Source string `json:"source"`
	// Voices are the voices cast for <|speaker:0|>, <|speaker:1|>, … (their
	// references are in Request); none for the model's own voice.
	Voices []string `json:"voices,omitempty"`
	// Group is the first take's id of the Speak ×N that made this one
	// (its variations share it); 0 for a take made alone.
	Group int `json:"group,omitempty"`
	// Spoken is the text the engine was given when the pronunciation
	// lexicon changed the request's (Config.Spoken); "" when it was the
	// request's own.
	Spoken string `json:"spoken,omitempty"`
}

// AudioEvent is the waveform of a chunk as it arrives: the desktop window
// draws it without receiving the PCM itself.
type AudioEvent struct {
	TakeID     int       `json:"take_id"`
	FromSample int       `json:"from_sample"`
	Samples    int       `json:"samples"` // the take's samples so far
	Bucket     int       `json:"bucket_samples"`
	Peaks      []float32 `json:"peaks"` // min, max per bucket from FromSample
}

// PCMChunk is a chunk's audio for the browser (Web Audio). Over the
// WebSocket it travels as one binary message (BinaryMessage); the desktop
// window does not receive it.
type PCMChunk struct {
	TakeID    int       `json:"take_id"`
	FromFrame int       `json:"from_frame"`
	ToFrame   int       `json:"to_frame"`
	PCM       []float32 `json:"-"`
}

// pcmMagic starts every binary PCM message.
const pcmMagic = "PCM1"

// BinaryMessage is "PCM1", then take id, from frame, to frame and the
// sample count as uint32 little-endian, then the samples as float32
// little-endian.
func (c *PCMChunk) BinaryMessage() []byte {
	b := make([]byte, 20+4*len(c.PCM))
	copy(b, pcmMagic)
	binary.LittleEndian.PutUint32(b[4:], uint32(c.TakeID))
	binary.LittleEndian.PutUint32(b[8:], uint32(c.FromFrame))
	binary.LittleEndian.PutUint32(b[12:], uint32(c.ToFrame))
	binary.LittleEndian.PutUint32(b[16:], uint32(len(c.PCM)))
	for i, v := range c.PCM {
		binary.LittleEndian.PutUint32(b[20+4*i:], math.Float32bits(v))
	}
	return b
}

// takeRun is the take in progress.
type takeRun struct {
	rec          *takeRecord
	ctx          context.Context // the take's (studio takes); cancel ends it
	cancel       context.CancelFunc
	done         chan struct{}
	lastProgress time.Time
	firstFrame   time.Time
	live         playback.LiveTake // live playback; nil without a sound card
	lastChunk    int               // frames in the last chunk
}

// LastFinish is the last finished take's figures, if any.
func (l *List) LastFinish() *api.Finish {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.list) - 1; i >= 0; i-- {
		if f := l.list[i].take.Finish; f != nil {
			c := *f
			return &c
		}
	}
	return nil
}

func (l *List) find(id int) (int, *takeRecord) {
	for i, r := range l.list {
		if r.take.ID == id {
			return i, r
		}
	}
	return -1, nil
}

// StartTake starts a take of req on the loaded model (Config.Engine) and
// returns at once; name and voices are kept with it. The take reports
// through "take", "audio" and "pcm" events and ends in the list. Without a
// model it returns the model's error (studio.ErrNoModel); while a take
// runs, studio.ErrBusy.
func (l *List) StartTake(req api.SpeechRequest, name string, voices []string) (Take, error) {
	started, err := l.startTakes([]api.SpeechRequest{req}, []string{name}, [][]string{voices}, "")
	if err != nil {
		return Take{}, err
	}
	return started[0], nil
}

// LineRequest is one take of StartLines: a line's request and the voices
// it is cast in (its references already resolved).
type LineRequest struct {
	Request api.SpeechRequest
	Voices  []string
}

// StartLines starts one take of each line together, as Speak all does
// when the engine runs several takes at once: each is a take of its own
// (no group), in its own voices. Errors as StartTake's, naming the line.
func (l *List) StartLines(lines []LineRequest) ([]Take, error) {
	reqs := make([]api.SpeechRequest, len(lines))
	voices := make([][]string, len(lines))
	for i, ln := range lines {
		reqs[i], voices[i] = ln.Request, ln.Voices
	}
	return l.startTakes(reqs, make([]string, len(lines)), voices, "")
}

// startTakes starts one take of each request together (names[i] is take
// i's name, voices[i] its voices); a group names what the takes are of one
// Speak ×N ("variation": Take.Group is the first's id), "" takes of their
// own. Only the first plays live through the sound card; the others are
// played from the list (Play), also while they are made.
func (l *List) startTakes(reqs []api.SpeechRequest, names []string, voices [][]string, group string) ([]Take, error) {
	for i, req := range reqs {
		if err := settings.ValidateSpeech(req); err != nil {
			switch {
			case group != "":
				return nil, fmt.Errorf("%s %d: %w", group, i+1, err)
			case len(reqs) > 1:
				return nil, fmt.Errorf("take %d of %d: %w", i+1, len(reqs), err)
			}
			return nil, err
		}
	}
	spoken := make([]string, len(reqs))
	for i, req := range reqs {
		spoken[i] = l.spokenText(req.Text)
	}
	l.mu.Lock()
	// The model is asked under the list's lock (the model's lock is taken
	// after it, never before): a model that starts loading after this has
	// to wait for the take this registers, which it sees as running.
	eng, sampleRate, err := l.engine()
	if err != nil {
		l.mu.Unlock()
		return nil, err
	}
	if len(l.running) > 0 {
		id := l.running[0].rec.take.ID
		l.mu.Unlock()
		return nil, fmt.Errorf("%w: take %d is running; press Stop first", studio.ErrBusy, id)
	}
	var views []Take
	var runs []*takeRun
	groupID := 0
	for i, req := range reqs {
		l.next++
		if group != "" && i == 0 {
			groupID = l.next
		}
		t := &Take{ID: l.next, Name: names[i], Request: req, State: TakeRunning, Started: time.Now().UnixMilli(), Source: SourceStudio,
			SampleRate: sampleRate, Voices: slices.Clone(voices[i]), Group: groupID, Spoken: spoken[i]}
		ctx, cancel := context.WithCancel(context.Background())
		run := &takeRun{rec: &takeRecord{take: t}, cancel: cancel, done: make(chan struct{}), ctx: ctx}
		if i == 0 {
			run.live = l.speaker.StartLive(t.ID)
		}
		l.running = append(l.running, run)
		l.list = append(l.list, run.rec)
		runs = append(runs, run)
		views = append(views, *t)
	}
	l.mu.Unlock()

	for i, run := range runs {
		l.events.Send(studio.EventTake, views[i])
		go l.runTake(run.ctx, eng, run)
	}
	return views, nil
}

func (l *List) runTake(ctx context.Context, eng api.Engine, run *takeRun) {
	defer close(run.done)
	defer run.cancel()
	info := eng.Info()
	spf := info.SamplesPerFrame
	audioRate := float64(info.SampleRate) / float64(max(spf, 1))
	fin, err := eng.Synthesize(ctx, engineRequest(run.rec.take), func(ev api.Event) {
		switch ev.Kind {
		case api.EventFrames:
			l.takeFrames(run, ev.Frames)
		case api.EventAudio:
			l.takeAudio(run, ev.Audio, spf, audioRate)
		}
	})
	underruns := 0
	if run.live != nil {
		underruns = run.live.End()
	}
	l.endTake(run, fin, err, underruns)
}

// endTake records how a take ended, stores it and publishes it (studio
// and API takes alike).
func (l *List) endTake(run *takeRun, fin *api.Finish, err error, underruns int) {
	// The take is written with its final state before the list shows it
	// finished, so a finished take in the list is already on disk.
	l.mu.Lock()
	final := *run.rec.take
	switch {
	case err != nil:
		final.State, final.Error = TakeFailed, err.Error()
	case fin == nil:
		final.State, final.Error = TakeFailed, "the engine ended the take without a result"
	default:
		c := *fin
		c.Codes = nil
		final.State, final.Finish, final.Frames = TakeFinished, &c, c.Frames
		run.rec.codes = fin.Codes
	}
	final.Underruns = underruns
	l.mu.Unlock()

	stored := l.storeTake(run.rec, &final)
	l.mu.Lock()
	*run.rec.take = final
	if stored > 0 {
		run.rec.bytes, run.rec.take.Stored = stored, true
		run.rec.pcm = nil // read back from disk when needed
	}
	l.running = slices.DeleteFunc(l.running, func(r *takeRun) bool { return r == run })
	view := *run.rec.take
	removed := l.trimListLocked()
	l.mu.Unlock()
	l.events.Send(studio.EventTake, view)
	l.announce(removed)
	if l.onEnd != nil {
		l.onEnd()
	}
}

func (l *List) takeFrames(run *takeRun, made int) {
	l.mu.Lock()
	t := run.rec.take
	t.Frames = made
	now := time.Now()
	if made == 1 || run.firstFrame.IsZero() {
		run.firstFrame = now
	} else if d := now.Sub(run.firstFrame).Seconds(); d > 0 {
		t.FramesPerSecond = float64(made-1) / d
	}
	due := now.Sub(run.lastProgress) >= progressEvery
	if due {
		run.lastProgress = now
	}
	view := *t
	l.mu.Unlock()
	if due {
		l.events.Send(studio.EventTake, view)
	}
}

func (l *List) takeAudio(run *takeRun, c *api.AudioChunk, spf int, audioRate float64) {
	if c == nil {
		return
	}
	l.mu.Lock()
	t := run.rec.take
	from := len(run.rec.pcm)
	run.rec.pcm = append(run.rec.pcm, c.PCM...)
	t.Samples = len(run.rec.pcm)
	id, rate, remaining, api := t.ID, t.FramesPerSecond, t.Request.MaxFrames-t.Frames, t.Source == SourceAPI
	run.lastChunk = c.ToFrame - c.FromFrame
	l.mu.Unlock()

	next := min(2*run.lastChunk, drama3.DefaultChunkPolicy().Max)
	if run.live != nil {
		run.live.Chunk(c.PCM, playback.RebufferSamples(rate, audioRate, remaining, next, spf))
	}
	l.events.Send(studio.EventAudio, AudioEvent{TakeID: id, FromSample: from, Samples: from + len(c.PCM), Bucket: PeakBucket, Peaks: peaksOf(c.PCM)})
	if !api { // an API take's audio goes to the client that asked for it
		l.events.Send(studio.EventPCM, &PCMChunk{TakeID: id, FromFrame: c.FromFrame, ToFrame: c.ToFrame, PCM: c.PCM})
	}
}

// storeTake writes a finished take (final is its state) under the takes
// directory, first removing the takes its budget lets it remove when the
// size limit requires it (budget.go), and returns the bytes written (0:
// not stored; its audio stays in memory, and a notice says so).
func (l *List) storeTake(rec *takeRecord, final *Take) int64 {
	limit := l.limit()
	var pinned map[int]bool
	if l.keep != nil {
		pinned = l.keep()
	}
	l.mu.Lock()
	st := l.store
	if st.dir == "" {
		l.mu.Unlock()
		return 0
	}
	size := int64(4*len(rec.pcm)) + 4096 // the JSON is small next to the audio
	evicted, fits := l.autoEvictionsLocked(rec, limit, size, pinned)
	if !fits {
		l.mu.Unlock()
		budget := "the takes limit (" + studio.ByteSize(limit) + ")"
		if final.Source == SourceAPI {
			budget = "what API takes may hold (" + studio.ByteSize(apiLimit(limit)) + ", half the takes limit)"
		}
		l.events.Notice(studio.NoticeWarning, fmt.Sprintf("take #%d (%s) does not fit in %s beside the named and chosen takes: kept in memory for this session only (unsaved takes may hold %s), not saved",
			final.ID, studio.ByteSize(size), budget, studio.ByteSize(maxUnsavedBytes)))
		return 0
	}
	for _, r := range evicted {
		i, _ := l.find(r.take.ID)
		l.list = append(l.list[:i], l.list[i+1:]...)
		l.stored -= r.bytes
	}
	l.mu.Unlock()

	for _, r := range evicted {
		if err := st.remove(r.take.ID); err != nil {
			l.events.Notice(studio.NoticeError, fmt.Sprintf("removing take #%d: %v", r.take.ID, err))
		}
		l.events.Send(studio.EventTakeRemoved, r.take.ID)
		l.events.Notice(studio.NoticeInfo, fmt.Sprintf("removed the oldest take #%d (%s) to stay under the takes limit of %s", r.take.ID, studio.ByteSize(r.bytes), studio.ByteSize(limit)))
	}
	n, err := st.save(rec, final)
	if err != nil {
		l.events.Notice(studio.NoticeError, fmt.Sprintf("take #%d was not saved (%v): it is kept in memory for this session only (unsaved takes may hold %s)", final.ID, err, studio.ByteSize(maxUnsavedBytes)))
		return 0
	}
	l.mu.Lock()
	l.stored += n
	l.mu.Unlock()
	return n
}

// Stop ends the running takes at their next frame, keeping what they made,
// and waits until they have ended. It reports whether a take was running.
func (l *List) Stop() (bool, error) {
	l.mu.Lock()
	runs := slices.Clone(l.running)
	l.mu.Unlock()
	for _, run := range runs {
		run.cancel()
	}
	for _, run := range runs {
		<-run.done
	}
	return len(runs) > 0, nil
}

// Takes lists the takes, newest first.
func (l *List) Takes() []Take {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Take, 0, len(l.list))
	for i := len(l.list) - 1; i >= 0; i-- {
		out = append(out, *l.list[i].take)
	}
	return out
}

// TakePCM returns a take's PCM (from memory or disk) and a copy of it.
func (l *List) TakePCM(id int) ([]float32, Take, error) {
	l.mu.Lock()
	_, r := l.find(id)
	if r == nil {
		l.mu.Unlock()
		return nil, Take{}, fmt.Errorf("%w: no take #%d", studio.ErrNotFound, id)
	}
	t := *r.take
	if r.pcm != nil || !t.Stored {
		pcm := r.pcm[:len(r.pcm):len(r.pcm)]
		l.mu.Unlock()
		return pcm, t, nil
	}
	st := l.store
	l.mu.Unlock()
	pcm, err := st.readPCM(&t)
	return pcm, t, err
}

// TakePeaks returns a take's waveform (min, max per PeakBucket samples).
func (l *List) TakePeaks(id int) (Peaks, error) {
	pcm, t, err := l.TakePCM(id)
	if err != nil {
		return Peaks{}, err
	}
	return Peaks{TakeID: t.ID, Bucket: PeakBucket, Samples: len(pcm), Values: peaksOf(pcm)}, nil
}

// TakeName renames a take.
type TakeName struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// RenameTake names a take (an empty name clears it).
func (l *List) RenameTake(n TakeName) (Take, error) {
	name := strings.TrimSpace(n.Name)
	if len(name) > maxTakeName || !utf8.ValidString(name) || strings.ContainsAny(name, "\x00\n\r") {
		return Take{}, fmt.Errorf("%w: a take name is one line of at most %d bytes of UTF-8", studio.ErrInvalid, maxTakeName)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, r := l.find(n.ID)
	if r == nil {
		return Take{}, fmt.Errorf("%w: no take #%d", studio.ErrNotFound, n.ID)
	}
	if r.take.State == TakeRunning {
		return Take{}, fmt.Errorf("%w: take #%d is still running", studio.ErrBusy, n.ID)
	}
	old := r.take.Name
	r.take.Name = name
	if r.bytes > 0 {
		size, err := l.store.rewriteMeta(r)
		if err != nil {
			r.take.Name = old
			return *r.take, fmt.Errorf("renaming take #%d: %w", n.ID, err)
		}
		l.stored += size - r.bytes
		r.bytes = size
	}
	view := *r.take
	go l.events.Send(studio.EventTake, view)
	return view, nil
}

// DeleteTake removes a take from the list and from disk.
func (l *List) DeleteTake(id int) (bool, error) {
	l.mu.Lock()
	i, r := l.find(id)
	if r == nil {
		l.mu.Unlock()
		return false, fmt.Errorf("%w: no take #%d", studio.ErrNotFound, id)
	}
	if r.take.State == TakeRunning {
		l.mu.Unlock()
		return false, fmt.Errorf("%w: take #%d is running; stop it first", studio.ErrBusy, id)
	}
	if r.bytes > 0 {
		if err := l.store.remove(id); err != nil {
			l.mu.Unlock()
			return false, fmt.Errorf("deleting take #%d: %w", id, err)
		}
		l.stored -= r.bytes
	}
	l.list = append(l.list[:i], l.list[i+1:]...)
	l.mu.Unlock()
	if st := l.speaker.Playback(); st.TakeID == id {
		l.speaker.Stop()
	}
	l.events.Send(studio.EventTakeRemoved, id)
	return true, nil
}

// Rerun names a take and the one setting to change for a new take.
type Rerun struct {
	ID      int     `json:"id"`
	Setting string  `json:"setting"` // temperature, top_p, top_k, seed or max_frames; "" changes nothing
	Value   float64 `json:"value"`
}

// RerunTake starts a new take with the text and settings of take ID, one
// setting changed.
func (l *List) RerunTake(r Rerun) (Take, error) {
	l.mu.Lock()
	_, rec := l.find(r.ID)
	if rec == nil {
		l.mu.Unlock()
		return Take{}, fmt.Errorf("%w: no take #%d", studio.ErrNotFound, r.ID)
	}
	req, name, voices := rec.take.Request, rec.take.Name, rec.take.Voices
	l.mu.Unlock()
	integral := func() (int, error) {
		if r.Value != math.Trunc(r.Value) || math.Abs(r.Value) > settings.MaxSeed {
			return 0, fmt.Errorf("%w: %s must be a whole number, got %v", studio.ErrInvalid, r.Setting, r.Value)
		}
		return int(r.Value), nil
	}
	label := fmt.Sprintf("#%d", r.ID)
	switch r.Setting {
	case "":
	case "temperature":
		req.Sampling.Temperature = float32(r.Value)
	case "top_p":
		req.Sampling.TopP = float32(r.Value)
	case "top_k":
		v, err := integral()
		if err != nil {
			return Take{}, err
		}
		req.Sampling.TopK = v
	case "seed":
		v, err := integral()
		if err != nil || v < 0 {
			return Take{}, fmt.Errorf("%w: seed must be a whole number ≥ 0, got %v", studio.ErrInvalid, r.Value)
		}
		req.Seed = uint64(v)
	case "max_frames":
		v, err := integral()
		if err != nil {
			return Take{}, err
		}
		req.MaxFrames = v
	default:
		return Take{}, fmt.Errorf("%w: unknown setting %q (temperature, top_p, top_k, seed, max_frames)", studio.ErrInvalid, r.Setting)
	}
	if r.Setting != "" {
		label += fmt.Sprintf(", %s %v", r.Setting, r.Value)
	}
	if name != "" {
		label = name + " (" + label + ")"
	} else {
		label = "re-run of " + label
	}
	if len(label) > maxTakeName {
		label = label[:maxTakeName]
		for !utf8.ValidString(label) {
			label = label[:len(label)-1]
		}
	}
	return l.StartTake(req, label, voices)
}
