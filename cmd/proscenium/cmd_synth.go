package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"proscenium/app/lexicon"
	"proscenium/app/model"
	"proscenium/app/settings"
	"proscenium/engine/api"
	"proscenium/engine/audio/pcm"
	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
	"proscenium/engine/gpuworker"
	"proscenium/engine/hfcache"
	"proscenium/engine/open"
)

func init() {
	register(command{name: "synth", summary: "speak a text into a WAV file or stdout (same seed, same bytes)", run: func(args []string) error {
		return synth(args, streams{in: os.Stdin, out: os.Stdout, log: os.Stderr, terminal: isTerminal(os.Stderr), outTerminal: isTerminal(os.Stdout)})
	}})
}

// takeFlags are the request flags synth and debug take share.
type takeFlags struct {
	model, text *string
	textFile    *string
	seed        *uint64
	maxFrames   *int
	temperature *float64
	topP        *float64
	topK        *int
	refs        *stringList
	refTexts    *stringList
	backend     *string
	numerics    *drama3.Numerics
}

func addTakeFlags(fs *flag.FlagSet) *takeFlags {
	d := api.DefaultSampling()
	refs, texts := &stringList{}, &stringList{}
	numerics := new(drama3.Numerics)
	fs.Var(numerics, "numerics", drama3.NumericsUsage)
	fs.Var(refs, "ref", "reference recording of a voice to clone (WAV, FLAC, MP3 or Ogg Opus, 2-30 s); repeat for several")
	fs.Var(texts, "ref-text", "what the --ref recording says (one per --ref, in order)")
	return &takeFlags{
		model:       fs.String("model", "", "checkpoint directory, or a Hugging Face repository id in the local cache such as "+hfcache.Repo+" (required)"),
		text:        fs.String("text", "", "text to speak (\"-\": read it from stdin; this or --text-file is required)"),
		textFile:    fs.String("text-file", "", "file holding the text to speak (UTF-8)"),
		seed:        fs.Uint64("seed", 0, "sampling seed: the same request and seed give the same take"),
		maxFrames:   fs.Int("max-frames", api.DefaultMaxFrames, "frame limit (2048 samples each at 44.1 kHz); the take ends with reason length"),
		temperature: fs.Float64("temperature", flagFloat(d.Temperature), "sampling temperature (0: greedy)"),
		topP:        fs.Float64("top-p", flagFloat(d.TopP), "top-p over the whole vocabulary (1: off)"),
		topK:        fs.Int("top-k", d.TopK, "top-k after top-p (0: off)"),
		refs:        refs,
		refTexts:    texts,
		backend:     fs.String("backend", open.Auto, "backend: auto (CUDA when a usable GPU is found, else CPU), cpu or cuda"),
		numerics:    numerics,
	}
}

// parseTakeFlags parses args and checks the flags every take needs; the
// text comes from --text, stdin (--text -) or --text-file.
func parseTakeFlags(fs *flag.FlagSet, tf *takeFlags, args []string, stdin io.Reader) (api.SpeechRequest, error) {
	if err := parseFlagsOnly(fs, args); err != nil {
		return api.SpeechRequest{}, err
	}
	if err := checkTakeInputs(fs, tf); err != nil {
		return api.SpeechRequest{}, err
	}
	if *tf.maxFrames < 1 {
		return api.SpeechRequest{}, fmt.Errorf("%w: --max-frames %d must be at least 1", errUsage, *tf.maxFrames)
	}
	if err := open.CheckBackend(*tf.backend); err != nil {
		return api.SpeechRequest{}, fmt.Errorf("%w: --backend: %v", errUsage, err)
	}
	sampling, err := api.SamplingOf(*tf.temperature, *tf.topP, *tf.topK)
	if err != nil {
		return api.SpeechRequest{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	text, err := readText(*tf.text, *tf.textFile, stdin)
	if err != nil {
		return api.SpeechRequest{}, err
	}
	if *tf.model, err = resolveModel(*tf.model); err != nil {
		return api.SpeechRequest{}, err
	}
	refs, err := loadReferences(*tf.model, *tf.refs, *tf.refTexts)
	if err != nil {
		return api.SpeechRequest{}, err
	}
	return api.SpeechRequest{
		Text:       text,
		Sampling:   sampling,
		Seed:       *tf.seed,
		MaxFrames:  *tf.maxFrames,
		References: refs,
	}, nil
}

// checkTakeInputs says which of --model, --text and --text-file is
// missing, empty or given twice.
func checkTakeInputs(fs *flag.FlagSet, tf *takeFlags) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case *tf.model == "":
		return fmt.Errorf("%w: --model is required (a checkpoint directory or a Hugging Face repository id)", errUsage)
	case *tf.text != "" && *tf.textFile != "":
		return fmt.Errorf("%w: give --text or --text-file, not both", errUsage)
	case *tf.text != "" || *tf.textFile != "":
		return nil
	case set["text"]:
		return fmt.Errorf("%w: --text is empty: give the text to speak (or --text - to read it from stdin)", errUsage)
	case set["text-file"]:
		return fmt.Errorf("%w: --text-file is empty: give the file that holds the text", errUsage)
	}
	return fmt.Errorf("%w: one of --text or --text-file is required", errUsage)
}

// resolveModel turns a --model argument into a checkpoint directory: a
// directory is itself, a repository id is its snapshot in the Hugging Face
// cache (offline; hfcache.ResolveModel).
func resolveModel(arg string) (string, error) {
	return hfcache.ResolveModel(arg, hfcache.HubDirs())
}

// maxTextBytes bounds the text read from stdin or --text-file: far more than
// a take of MaxFramesLimit frames speaks, small enough to refuse a wrong file.
const maxTextBytes = 1 << 20

// readText is --text, or stdin for "-", or the --text-file's content.
func readText(text, file string, stdin io.Reader) (string, error) {
	var r io.Reader
	name := "stdin"
	switch {
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", fmt.Errorf("--text-file: %w", err)
		}
		defer f.Close()
		r, name = f, file
	case text == "-":
		r = stdin
	default:
		return text, nil
	}
	b, over, err := readAtMost(r, maxTextBytes)
	switch {
	case err != nil:
		return "", fmt.Errorf("reading the text from %s: %w", name, err)
	case over:
		return "", fmt.Errorf("the text in %s is longer than %d bytes", name, maxTextBytes)
	case !utf8.Valid(b):
		return "", fmt.Errorf("the text in %s is not UTF-8", name)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("%w: the text in %s is empty", errUsage, name)
	}
	return t, nil
}

// takeEventHook, when set (tests), sees every event of runTake's take.
var takeEventHook func(api.Event)

// runTake runs req and returns the take's PCM, checking that the chunks
// arrive in order and cover every frame. An interrupt (Ctrl-C) stops the take
// at the next frame and keeps what was made. frames, when set, sees the
// frame count after each chunk.
func runTake(eng api.Engine, req api.SpeechRequest, frames func(done int)) ([]float32, *api.Finish, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	spf := eng.Info().SamplesPerFrame
	var pcm []float32
	var chunkErr error
	next := 0
	fin, err := eng.Synthesize(ctx, req, func(ev api.Event) {
		if takeEventHook != nil {
			takeEventHook(ev)
		}
		if ev.Kind != api.EventAudio || chunkErr != nil {
			return
		}
		a := ev.Audio
		if a.FromFrame != next || len(a.PCM) != (a.ToFrame-a.FromFrame)*spf {
			chunkErr = fmt.Errorf("audio chunk [%d, %d) with %d samples after frame %d", a.FromFrame, a.ToFrame, len(a.PCM), next)
			return
		}
		pcm = append(pcm, a.PCM...)
		next = a.ToFrame
		if frames != nil {
			frames(next)
		}
	})
	if err != nil {
		return pcm, nil, err // the audio made before the error, in order
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

// streams are a command's standard files; terminal says whether log is one
// (progress lines are shown only there), outTerminal whether out is.
type streams struct {
	in                    io.Reader
	out, log              io.Writer
	terminal, outTerminal bool
}

// runSynth is synth with stdin and stdout, log as given (not a terminal).
func runSynth(args []string, log io.Writer) error {
	return synth(args, streams{in: os.Stdin, out: os.Stdout, log: log})
}

// synthSummary is what synth --json prints.
type synthSummary struct {
	Out   string `json:"out"`
	Codes string `json:"codes,omitempty"`
	Demo  bool   `json:"demo"`
	// Spoken is the text the engine was given, when --lexicon changed it.
	Spoken string      `json:"spoken,omitempty"`
	Finish *api.Finish `json:"finish"`
	// Takes is every take of a --repeat run, in order (Finish is the last).
	Takes []*api.Finish `json:"takes,omitempty"`
}

// maxRepeat bounds --repeat.
const maxRepeat = 100

func synth(args []string, std streams) error {
	fs := newFlags("synth")
	tf := addTakeFlags(fs)
	out := fs.String("out", "", "WAV file to write, mono at the codec's rate (\"-\": stdout; required)")
	formatName := fs.String("format", "pcm16", "WAV sample format: pcm16 or float32")
	codesOut := fs.String("codes", "", "also write the codes as .npy, int64 [codebooks, frames]")
	isolate := fs.Bool("isolate", false, "run the engine in a child process (proscenium worker); the same seed gives the same bytes")
	memCap := memoryCapFlag(fs)
	voiceCache := voiceCacheFlag(fs)
	asJSON := fs.Bool("json", false, "print the take's summary (frames, finish reason, timings) as JSON on stdout")
	quiet := fs.Bool("quiet", false, "print nothing but errors (no progress, no summary line)")
	lexiconFile := fs.String("lexicon", "", "pronunciations to apply to the text: a JSON array of {\"written\", \"spoken\"}, or a settings file (the studio's: "+settings.DefaultPath()+")")
	repeat := fs.Int("repeat", 1, "make the take this many times in one process (the WAV and codes are the last one's): a later take in a --ref voice starts from the voice cache and prefills only the script")
	req, err := parseTakeFlags(fs, tf, args, std.in)
	if err != nil {
		return err
	}
	written := req.Text
	if *lexiconFile != "" {
		entries, err := lexicon.ReadFile(*lexiconFile)
		if err != nil {
			return fmt.Errorf("--lexicon: %w", err)
		}
		req.Text = lexicon.Apply(req.Text, entries)
	}
	if *repeat < 1 || *repeat > maxRepeat {
		return fmt.Errorf("%w: --repeat %d must be in 1..%d", errUsage, *repeat, maxRepeat)
	}
	if *out == "" {
		return fmt.Errorf("%w: --out is required", errUsage)
	}
	toStdout := *out == "-"
	if toStdout && *asJSON {
		return fmt.Errorf("%w: --out - and --json both write to stdout; give --out FILE", errUsage)
	}
	if toStdout && std.outTerminal {
		return fmt.Errorf("%w: --out - would write the WAV to the terminal; redirect stdout to a file or a program", errUsage)
	}
	format, err := pcm.ParseFormat(*formatName)
	if err != nil {
		return fmt.Errorf("%w: --format: %v", errUsage, err)
	}
	// A take can last minutes: find a bad output path before making it.
	if !toStdout {
		if err := checkOutputFile("--out", *out); err != nil {
			return err
		}
	}
	if *codesOut != "" {
		if err := checkOutputFile("--codes", *codesOut); err != nil {
			return err
		}
	}
	prog := &progress{w: std.log, on: std.terminal && !*quiet}
	stopLoad := func(bool) {}
	if prog.on {
		stopLoad = model.WatchLoad(*tf.model, prog.load)
	}
	eng, err := open.Open(context.Background(), *tf.model, open.Options{Backend: *tf.backend, Isolate: *isolate,
		MemoryCap: memCap.or(0), VoiceCacheBytes: voiceCache.or(0), Numerics: *tf.numerics, Batch: 1})
	stopLoad(err == nil)
	if err != nil {
		prog.end()
		return err
	}
	defer eng.Close()
	info := eng.Info()
	var samples []float32
	var fin *api.Finish
	var takes []*api.Finish
	for range *repeat {
		start := time.Now()
		samples, fin, err = runTake(eng, req, func(done int) {
			prog.frames(done, req.MaxFrames, float64(done*info.SamplesPerFrame)/float64(info.SampleRate), time.Since(start))
		})
		if err != nil || fin.Reason == api.FinishCancel {
			break
		}
		takes = append(takes, fin)
	}
	prog.end()
	if err != nil {
		// A take that failed midway (the GPU worker killed, a device
		// error) keeps the audio it made.
		if len(samples) > 0 && !toStdout && pcm.WriteWAV(*out, samples, info.SampleRate, format) == nil {
			return fmt.Errorf("%w (the %.2f s of audio made before it are in %s)", err, float64(len(samples))/float64(info.SampleRate), *out)
		}
		return err
	}
	if toStdout {
		wav, err := pcm.EncodeWAV(samples, info.SampleRate, format)
		if err != nil {
			return err
		}
		if _, err := std.out.Write(wav); err != nil {
			return fmt.Errorf("writing the WAV to stdout: %w", err)
		}
	} else if err := pcm.WriteWAV(*out, samples, info.SampleRate, format); err != nil {
		return err
	}
	if *codesOut != "" {
		if err := checkpoint.WriteNPYFile(*codesOut, codesTensor(fin.Codes, info.Codebooks)); err != nil {
			return err
		}
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(std.out)
		enc.SetIndent("", "  ")
		sum := synthSummary{Out: *out, Codes: *codesOut, Demo: info.Demo, Finish: fin}
		if req.Text != written {
			sum.Spoken = req.Text
		}
		if *repeat > 1 {
			sum.Takes = takes
		}
		if err := enc.Encode(sum); err != nil {
			return err
		}
	case !*quiet:
		if *repeat > 1 {
			for i, t := range takes {
				cached := ""
				if t.VoiceCached {
					cached = ", the voice from the cache"
				}
				fmt.Fprintf(std.log, "take %d: first audio %.1f ms, prefill %.1f ms of %d of %d prompt rows%s\n",
					i+1, t.TimeToFirstAudioMs, t.StagesS[drama3.StagePrefill]*1e3, t.PrefillRows, t.PromptRows, cached)
			}
		}
		demo := ""
		if info.Demo {
			demo = " (demo model: random weights, speaks no words)"
		}
		if pid := gpuworker.PID(eng); pid != 0 {
			demo += fmt.Sprintf(" (engine worker pid %d)", pid)
		}
		if info.BackendReason != "" {
			demo += fmt.Sprintf(" (backend %s: %s)", info.Backend, info.BackendReason)
		}
		if x := eng.Stats().Memory.Experts; x != nil && x.HostBytes > 0 {
			demo += fmt.Sprintf(" (%s: %d of %d layers' experts on the device, %s pinned in host memory, %s over the bus a frame)",
				x.Tier, x.DeviceLayers, x.Layers, byteSize(x.HostBytes), byteSize(x.BusBytesPerFrame))
		}
		fmt.Fprintf(std.log, "%s: %d frames, %.2f s of audio, finish %s, first audio %.1f ms, real-time factor %.3f%s\n",
			*out, fin.Frames, fin.AudioS, fin.Reason, fin.TimeToFirstAudioMs, fin.RealTimeFactor, demo)
	}
	if fin.Reason == api.FinishCancel { // only an interrupt cancels a take here
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

// readAtMost reads r to its end, keeping at most limit bytes: over says r
// held more. Nothing past limit+1 bytes is read (a device such as /dev/zero
// never ends); a pipe reads like a file.
func readAtMost(r io.Reader, limit int) (b []byte, over bool, err error) {
	b, err = io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if len(b) > limit {
		return b[:limit], true, err
	}
	return b, false, err
}
