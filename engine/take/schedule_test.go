package take_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/audio/pcm"
	"proscenium/engine/drama3"
	"proscenium/engine/internal/testutil"
	"proscenium/engine/open"
)

// The scheduler's checks on the CPU backend with the demo checkpoint: takes
// run together, each as it would alone.

// batchEngine is the demo checkpoint on the CPU with up to four takes
// together, opened once for the package's tests.
var batchEngine = sync.OnceValues(func() (api.Engine, error) {
	dir, err := os.MkdirTemp("", "proscenium-batch-")
	if err != nil {
		return nil, err
	}
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 1, BaseTokenizer: baseTokenizer}); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) // the engine has read everything it needs
	return open.Open(context.Background(), dir, open.Options{Backend: open.CPU, Batch: 4})
})

var baseTokenizer []byte

func openBatch(t *testing.T) api.Engine {
	t.Helper()
	baseTokenizer = testutil.ReadFoundFile(t, drama3.FindBaseTokenizer)
	eng, err := batchEngine()
	if err != nil {
		t.Fatal(err)
	}
	if b := eng.Info().Batch; b != 4 {
		t.Fatalf("info batch %d, want 4", b)
	}
	return eng
}

func request(seed uint64, frames int) api.SpeechRequest {
	return api.SpeechRequest{Text: "Several takes at once.", Sampling: api.DefaultSampling(), Seed: seed, MaxFrames: frames}
}

// outcome is a take's result and its streamed audio as a WAV file.
type outcome struct {
	fin *api.Finish
	wav []byte
	err error
}

// synthesize runs req, collecting its audio; on sees every event first.
func synthesize(t *testing.T, eng api.Engine, ctx context.Context, req api.SpeechRequest, on func(api.Event)) outcome {
	var samples []float32
	fin, err := eng.Synthesize(ctx, req, func(ev api.Event) {
		if on != nil {
			on(ev)
		}
		if ev.Kind == api.EventAudio {
			samples = append(samples, ev.Audio.PCM...)
		}
	})
	if err != nil {
		return outcome{err: err}
	}
	wav, err := pcm.EncodeWAV(samples, eng.Info().SampleRate, pcm.PCM16)
	if err != nil {
		t.Error(err)
	}
	return outcome{fin: fin, wav: wav}
}

// together runs the requests at once, each with its own listener (nil: none).
func together(t *testing.T, eng api.Engine, ctxs []context.Context, reqs []api.SpeechRequest, on []func(api.Event)) []outcome {
	out := make([]outcome, len(reqs))
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			if ctxs != nil && ctxs[i] != nil {
				ctx = ctxs[i]
			}
			var listen func(api.Event)
			if on != nil {
				listen = on[i]
			}
			out[i] = synthesize(t, eng, ctx, reqs[i], listen)
		}()
	}
	wg.Wait()
	return out
}

// Four requests at once all get their first audio before any of them
// finishes. Each take's listener holds its first frame until all four have
// made one: a scheduler that ran one take at a time would never release it
// (the test fails at the deadline).
func TestBatchFirstAudioBeforeAnyFinishes(t *testing.T) {
	eng := openBatch(t)
	const n = 4
	var order atomic.Int64 // event sequence
	var firstAudio, finished [n]int64
	var made sync.WaitGroup
	made.Add(n)
	all := make(chan struct{})
	go func() { made.Wait(); close(all) }()
	reqs := make([]api.SpeechRequest, n)
	on := make([]func(api.Event), n)
	for i := range n {
		reqs[i] = request(uint64(10+i), 12)
		on[i] = func(ev api.Event) {
			switch ev.Kind {
			case api.EventFrames:
				if ev.Frames == 1 {
					made.Done()
					select {
					case <-all:
					case <-time.After(20 * time.Second):
						t.Errorf("take %d: the others made no first frame while it waited: the takes do not run together", i)
					}
				}
			case api.EventAudio:
				if firstAudio[i] == 0 {
					firstAudio[i] = order.Add(1)
				}
			case api.EventFinished:
				finished[i] = order.Add(1)
			}
		}
	}
	out := together(t, eng, nil, reqs, on)
	first := int64(1 << 62)
	for i, o := range out {
		if o.err != nil {
			t.Fatalf("take %d: %v", i, o.err)
		}
		if o.fin.Batch < 1 || o.fin.Batch > n {
			t.Errorf("take %d: batch %d", i, o.fin.Batch)
		}
		first = min(first, finished[i])
	}
	for i := range n {
		if firstAudio[i] == 0 || firstAudio[i] > first {
			t.Errorf("take %d: first audio at event %d, the first take finished at event %d", i, firstAudio[i], first)
		}
	}
}

// A take gives the same codes and byte-identical WAV alone and beside
// three others with other seeds.
func TestBatchSameSeedSameWAV(t *testing.T) {
	eng := openBatch(t)
	alone := synthesize(t, eng, context.Background(), request(7, 16), nil)
	if alone.err != nil {
		t.Fatal(alone.err)
	}
	if alone.fin.Batch != 1 {
		t.Errorf("a take alone ran in a batch of %d", alone.fin.Batch)
	}
	reqs := []api.SpeechRequest{request(1, 20), request(7, 16), request(2, 9), request(3, 24)}
	out := together(t, eng, nil, reqs, nil)
	for i, o := range out {
		if o.err != nil {
			t.Fatalf("take %d: %v", i, o.err)
		}
	}
	got := out[1]
	if !reflect.DeepEqual(got.fin.Codes, alone.fin.Codes) {
		t.Fatalf("seed 7 made other codes beside three other takes (%d frames) than alone (%d frames)", len(got.fin.Codes), len(alone.fin.Codes))
	}
	if !bytes.Equal(got.wav, alone.wav) {
		t.Fatalf("seed 7's WAV beside three other takes differs from alone (%d and %d bytes)", len(got.wav), len(alone.wav))
	}
	if k := min(len(out[0].fin.Codes), len(got.fin.Codes)); reflect.DeepEqual(out[0].fin.Codes[:k], got.fin.Codes[:k]) {
		t.Fatal("a take with another seed made the same codes: the check cannot tell takes apart")
	}
}

// A take stopped mid-batch ends within the frame its caller stopped it at;
// the others make the same codes as without the stop.
func TestBatchCancelMidBatch(t *testing.T) {
	eng := openBatch(t)
	reqs := []api.SpeechRequest{request(4, 14), request(5, 40), request(6, 14)}
	want := together(t, eng, nil, reqs, nil)
	if want[1].err != nil || want[1].fin.Frames <= 5 {
		t.Fatalf("the take to stop: %v; it must make more than 5 frames", want[1].err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	on := []func(api.Event){nil, func(ev api.Event) {
		if ev.Kind == api.EventFrames && ev.Frames == 5 {
			cancel()
		}
	}, nil}
	got := together(t, eng, []context.Context{nil, ctx, nil}, reqs, on)
	for i, o := range got {
		if o.err != nil {
			t.Fatalf("take %d: %v", i, o.err)
		}
	}
	if f := got[1].fin; f.Reason != api.FinishCancel || f.Frames != 5 {
		t.Fatalf("stopped take: %s after %d frames, want cancel after 5", f.Reason, f.Frames)
	}
	if !bytes.Equal(got[1].wav[44:], want[1].wav[44:44+5*2048*2]) {
		t.Fatal("the stopped take's 5 frames of audio differ from the same take's first 5 frames")
	}
	for _, i := range []int{0, 2} {
		if !reflect.DeepEqual(got[i].fin.Codes, want[i].fin.Codes) || !bytes.Equal(got[i].wav, want[i].wav) {
			t.Fatalf("take %d made other codes or audio beside the stopped take", i)
		}
	}
}

// A take with a bad voice fails alone: the takes beside it make what they
// make without it.
func TestBatchBadVoiceFailsAlone(t *testing.T) {
	eng := openBatch(t)
	reqs := []api.SpeechRequest{request(8, 12), request(9, 12), request(10, 12)}
	want := together(t, eng, nil, reqs, nil)
	bad := reqs[1]
	bad.References = []api.Reference{{Transcript: "A voice.", Codes: [][]int{{1 << 20, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}}
	got := together(t, eng, nil, []api.SpeechRequest{reqs[0], bad, reqs[2]}, nil)
	if !errors.Is(got[1].err, api.ErrInvalidRequest) {
		t.Fatalf("bad voice: error %v, want an invalid request", got[1].err)
	}
	for _, i := range []int{0, 2} {
		if got[i].err != nil {
			t.Fatalf("take %d beside the bad voice: %v", i, got[i].err)
		}
		if !reflect.DeepEqual(got[i].fin.Codes, want[i].fin.Codes) || !bytes.Equal(got[i].wav, want[i].wav) {
			t.Fatalf("take %d made other codes or audio beside the bad voice", i)
		}
	}
}
