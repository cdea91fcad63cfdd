package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"proscenium/engine"
	"proscenium/engine/audio"
	"proscenium/engine/checkpoint"
)

func init() {
	register(command{name: "synth", summary: "speak a text into a WAV file (same seed, same bytes)", run: func(args []string) error {
		return runSynth(args, os.Stderr)
	}})
}

// takeFlags are the request flags synth and debug take share.
type takeFlags struct {
	model, text *string
	seed        *uint64
	maxFrames   *int
	temperature *float64
	topP        *float64
	topK        *int
	refs        *stringList
	refTexts    *stringList
}

func addTakeFlags(fs *flag.FlagSet) *takeFlags {
	d := engine.DefaultSampling()
	refs, texts := &stringList{}, &stringList{}
	fs.Var(refs, "ref", "reference recording of a voice to clone (WAV, FLAC, MP3 or Ogg Opus, 2-30 s); repeat for several")
	fs.Var(texts, "ref-text", "what the --ref recording says (one per --ref, in order)")
	return &takeFlags{
		model:       fs.String("model", "", "checkpoint directory (required)"),
		text:        fs.String("text", "", "text to speak (required)"),
		seed:        fs.Uint64("seed", 0, "sampling seed: the same request and seed give the same take"),
		maxFrames:   fs.Int("max-frames", 1024, "frame limit (2048 samples each at 44.1 kHz); the take ends with reason length"),
		temperature: fs.Float64("temperature", float64(d.Temperature), "sampling temperature (0: greedy)"),
		topP:        fs.Float64("top-p", float64(d.TopP), "top-p over the whole vocabulary (1: off)"),
		topK:        fs.Int("top-k", d.TopK, "top-k after top-p (0: off)"),
		refs:        refs,
		refTexts:    texts,
	}
}

// parseTakeFlags parses args and checks the flags every take needs.
func parseTakeFlags(fs *flag.FlagSet, tf *takeFlags, args []string) (engine.SpeechRequest, error) {
	if err := parseFlagsOnly(fs, args); err != nil {
		return engine.SpeechRequest{}, err
	}
	if *tf.model == "" || *tf.text == "" {
		return engine.SpeechRequest{}, fmt.Errorf("%w: --model and --text are required", errUsage)
	}
	if *tf.maxFrames < 1 {
		return engine.SpeechRequest{}, fmt.Errorf("%w: --max-frames %d must be at least 1", errUsage, *tf.maxFrames)
	}
	refs, err := loadReferences(*tf.model, *tf.refs, *tf.refTexts)
	if err != nil {
		return engine.SpeechRequest{}, err
	}
	return engine.SpeechRequest{
		Text:       *tf.text,
		Sampling:   engine.Sampling{Temperature: float32(*tf.temperature), TopP: float32(*tf.topP), TopK: *tf.topK},
		Seed:       *tf.seed,
		MaxFrames:  *tf.maxFrames,
		References: refs,
	}, nil
}

// takeEventHook, when set (tests), sees every event of runTake's take.
var takeEventHook func(engine.Event)

// runTake runs req and returns the take's PCM, checking that the chunks
// arrive in order and cover every frame. An interrupt (Ctrl-C) stops the take
// at the next frame and keeps what was made.
func runTake(eng engine.Engine, req engine.SpeechRequest) ([]float32, *engine.Finish, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	spf := eng.Info().SamplesPerFrame
	var pcm []float32
	var chunkErr error
	next := 0
	fin, err := eng.Synthesize(ctx, req, func(ev engine.Event) {
		if takeEventHook != nil {
			takeEventHook(ev)
		}
		if ev.Kind != engine.EventAudio || chunkErr != nil {
			return
		}
		a := ev.Audio
		if a.FromFrame != next || len(a.PCM) != (a.ToFrame-a.FromFrame)*spf {
			chunkErr = fmt.Errorf("audio chunk [%d, %d) with %d samples after frame %d", a.FromFrame, a.ToFrame, len(a.PCM), next)
			return
		}
		pcm = append(pcm, a.PCM...)
		next = a.ToFrame
	})
	if err != nil {
		return nil, nil, err
	}
	if chunkErr != nil {
		return nil, nil, chunkErr
	}
	if next != fin.Frames {
		return nil, nil, fmt.Errorf("audio covers %d frames of %d", next, fin.Frames)
	}
	return pcm, fin, nil
}

// codesTensor lays codes out as the reference does: int64 [codebooks, frames].
func codesTensor(codes [][]int, codebooks int) *checkpoint.Tensor {
	flat := make([]int64, codebooks*len(codes))
	for f, fr := range codes {
		for cb, c := range fr {
			flat[cb*len(codes)+f] = int64(c)
		}
	}
	return checkpoint.Int64Tensor("codes", []int{codebooks, len(codes)}, flat)
}

func runSynth(args []string, log io.Writer) error {
	fs := newFlags("synth")
	tf := addTakeFlags(fs)
	out := fs.String("out", "", "WAV file to write, mono at the codec's rate (required)")
	formatName := fs.String("format", "pcm16", "WAV sample format: pcm16 or float32")
	codesOut := fs.String("codes", "", "also write the codes as .npy, int64 [codebooks, frames]")
	req, err := parseTakeFlags(fs, tf, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: --out is required", errUsage)
	}
	format, err := audio.ParseFormat(*formatName)
	if err != nil {
		return fmt.Errorf("%w: --format: %v", errUsage, err)
	}
	// A take can last minutes: find a bad output path before making it.
	if err := checkOutputFile("--out", *out); err != nil {
		return err
	}
	if *codesOut != "" {
		if err := checkOutputFile("--codes", *codesOut); err != nil {
			return err
		}
	}
	eng, err := engine.Open(*tf.model, engine.Options{})
	if err != nil {
		return err
	}
	defer eng.Close()
	info := eng.Info()
	pcm, fin, err := runTake(eng, req)
	if err != nil {
		return err
	}
	if err := audio.WriteWAV(*out, pcm, info.SampleRate, format); err != nil {
		return err
	}
	if *codesOut != "" {
		if err := checkpoint.WriteNPYFile(*codesOut, codesTensor(fin.Codes, info.Codebooks)); err != nil {
			return err
		}
	}
	demo := ""
	if info.Demo {
		demo = " (demo model: random weights, speaks no words)"
	}
	fmt.Fprintf(log, "%s: %d frames, %.2f s of audio, finish %s, first audio %v, real-time factor %.3f%s\n",
		*out, fin.Frames, fin.AudioSeconds, fin.Reason, fin.TimeToFirstAudio.Round(1e5), fin.RealTimeFactor, demo)
	if fin.Reason == engine.FinishCancel { // only an interrupt cancels a take here
		return fmt.Errorf("%w: the partial take (%d frames) is in %s", errInterrupted, fin.Frames, *out)
	}
	return nil
}

// checkOutputFile refuses an output path that cannot be written: a
// directory, a missing or read-only folder.
func checkOutputFile(flagName, path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%w: %s %s is a directory; give a file name", errUsage, flagName, path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("%s %s: the folder %s does not exist", flagName, path, dir)
	}
	probe, err := os.CreateTemp(dir, ".proscenium-write-check-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot write in %s: %w", flagName, path, dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}
