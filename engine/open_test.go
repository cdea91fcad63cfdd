package engine

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// tinyMade is the directory tinyDir made, removed after the tests.
var tinyMade string

// tinyDir writes one make-tiny checkpoint for the package's tests. It needs
// the base Qwen tokenizer.json from `make deps`.
var tinyDir = sync.OnceValues(func() (string, error) {
	path, err := drama3.FindBaseTokenizer()
	if err != nil {
		return "", err
	}
	base, err := os.ReadFile(path)
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
var tinyEngine = sync.OnceValues(func() (Engine, error) {
	dir, err := tinyDir()
	if err != nil {
		return nil, err
	}
	return Open(dir, Options{})
})

func openTiny(t *testing.T) (Engine, string) {
	t.Helper()
	dir, err := tinyDir()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("demo checkpoint: %v", err)
		}
		t.Skipf("demo checkpoint: %v (run make deps)", err)
	}
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
	req := SpeechRequest{Text: "Hello there, this is a demo take.", Sampling: DefaultSampling(), Seed: 7, MaxFrames: 48}
	var events []Event
	fin, err := eng.Synthesize(context.Background(), req, func(ev Event) { events = append(events, ev) })
	if err != nil {
		t.Fatal(err)
	}
	if fin.Reason != FinishLength || fin.Frames != 48 || len(fin.Codes) != 48 {
		t.Fatalf("finish %s with %d frames, want length with 48 (seed 7 on the seed-1 demo model)", fin.Reason, fin.Frames)
	}
	var pcm []float32
	frames, next := 0, 0
	for i, ev := range events {
		switch ev.Kind {
		case EventFrames:
			if ev.Frames != frames+1 {
				t.Fatalf("event %d: frames %d after %d", i, ev.Frames, frames)
			}
			frames = ev.Frames
		case EventAudio:
			a := ev.Audio
			if a.FromFrame != next || a.ToFrame > frames || len(a.PCM) != (a.ToFrame-a.FromFrame)*2048 {
				t.Fatalf("event %d: chunk [%d, %d) of %d samples after frame %d with %d made", i, a.FromFrame, a.ToFrame, len(a.PCM), next, frames)
			}
			if next == 0 && a.ToFrame != 1 {
				t.Fatalf("first chunk [%d, %d): the first frame must be decoded alone", a.FromFrame, a.ToFrame)
			}
			next = a.ToFrame
			pcm = append(pcm, a.PCM...)
		case EventFinished:
			if i != len(events)-1 || ev.Finished != fin {
				t.Fatalf("finished event at %d of %d", i, len(events))
			}
		}
	}
	if next != 48 {
		t.Fatalf("audio covers %d frames", next)
	}

	// Every chunk equals the whole decode's samples for its frames.
	codec, err := cpu.LoadCodecFile(filepath.Join(dir, "codec.pth"), cpu.CodecOptions{})
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
	for _, stage := range []string{StagePrompt, drama3.StagePrefill, drama3.StageTower, drama3.StageBackbone, drama3.StageCodec, drama3.StageSample} {
		if _, ok := fin.Stages[stage]; !ok {
			t.Errorf("no %s stage in %v", stage, fin.Stages)
		}
	}
	if fin.TimeToFirstAudio <= 0 || fin.TimeToFirstAudio > fin.Elapsed || fin.RealTimeFactor <= 0 {
		t.Errorf("figures: first audio %v, elapsed %v, real-time factor %v", fin.TimeToFirstAudio, fin.Elapsed, fin.RealTimeFactor)
	}
	if want := 48 * 2048 / 44100.0; math.Abs(fin.AudioSeconds-want) > 1e-12 {
		t.Errorf("audio seconds %v, want %v", fin.AudioSeconds, want)
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
	req := SpeechRequest{Text: "Stop me.", Sampling: DefaultSampling(), Seed: 7, MaxFrames: 48}
	fin, err := eng.Synthesize(ctx, req, func(ev Event) {
		switch ev.Kind {
		case EventFrames:
			if ev.Frames == 5 {
				cancel()
			}
		case EventAudio:
			samples += len(ev.Audio.PCM)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if fin.Reason != FinishCancel || fin.Frames != 5 || samples != 5*2048 {
		t.Fatalf("finish %s, %d frames, %d samples; want cancel, 5, %d", fin.Reason, fin.Frames, samples, 5*2048)
	}
}

func TestSynthesizeRefusesBadRequests(t *testing.T) {
	eng, _ := openTiny(t)
	for _, c := range []struct {
		req  SpeechRequest
		want string
	}{
		{SpeechRequest{Text: "hi", Sampling: DefaultSampling(), MaxFrames: 0}, "max_frames"},
		{SpeechRequest{Text: "hi", Sampling: Sampling{Temperature: 1, TopP: 0}, MaxFrames: 4}, "top_p"},
		{SpeechRequest{Text: "hi", Sampling: Sampling{Temperature: -1, TopP: 1}, MaxFrames: 4}, "temperature"},
		{SpeechRequest{Text: "   ", Sampling: DefaultSampling(), MaxFrames: 4}, "empty"},
		{SpeechRequest{Text: "a <|im_end|> b", Sampling: DefaultSampling(), MaxFrames: 4}, "<|im_end|>"},
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
		req := SpeechRequest{Text: "Again.", Sampling: DefaultSampling(), Seed: seed, MaxFrames: 6}
		fin, err := eng.Synthesize(context.Background(), req, func(ev Event) {
			if ev.Kind == EventAudio {
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
	req := SpeechRequest{Text: "Hello there, this is a demo take.", Sampling: DefaultSampling(), Seed: 7, MaxFrames: 48}
	stages := map[string]float64{}
	var rtf, ttfa float64
	for b.Loop() {
		fin, err := eng.Synthesize(context.Background(), req, nil)
		if err != nil {
			b.Fatal(err)
		}
		rtf += fin.RealTimeFactor
		ttfa += fin.TimeToFirstAudio.Seconds()
		for k, v := range fin.Stages {
			stages[k] += v.Seconds()
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
	req := SpeechRequest{Text: "Queue.", Sampling: DefaultSampling(), Seed: 9, MaxFrames: 3}
	var wg sync.WaitGroup
	results := make([]*Finish, 3)
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
