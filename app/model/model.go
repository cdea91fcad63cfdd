package model

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adrg/xdg"

	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/engine/api"
	"proscenium/engine/demo/qwen3"
	"proscenium/engine/drama3"
	"proscenium/engine/hfcache"
	"proscenium/engine/open"
)

// This file is the model panel: finding checkpoints (the settings'
// directory, Drama 3 snapshots in the Hugging Face cache, the demo),
// inspect's summary with the memory a model needs before it is loaded, the
// demo checkpoint (make-tiny), load progress, and the token count of the
// script.

// ModelContextRows is the context the memory estimate provisions caches
// for (the same default as `proscenium inspect`).
const ModelContextRows = 4096

// DefaultDemoDir is $XDG_DATA_HOME/proscenium/demo-model.
func DefaultDemoDir() string { return filepath.Join(xdg.DataHome, "proscenium", "demo-model") }

// ModelCandidate is a checkpoint directory the panel offers.
type ModelCandidate struct {
	Dir    string `json:"dir"`
	Source string `json:"source"` // "settings", "huggingface cache" or "demo"
	Label  string `json:"label"`
}

func hasConfig(dir string) bool {
	_, err := drama3.StatConfig(dir)
	return err == nil
}

// FindModels lists checkpoint directories to offer: the one in the
// settings, the Drama 3 snapshots of the Hugging Face cache (complete ones
// first, the one refs/main names first among those; see hfcache.Find), and
// the demo checkpoint if it has been made.
func (c *Control) FindModels() []ModelCandidate {
	out := []ModelCandidate{}
	seen := map[string]bool{}
	add := func(dir, source, label string) {
		if dir == "" || seen[dir] || !hasConfig(dir) {
			return
		}
		seen[dir] = true
		out = append(out, ModelCandidate{Dir: dir, Source: source, Label: label})
	}
	add(c.settings().ModelDir, "settings", "last used")
	for _, snap := range hfcache.Find(hfcache.HubDirs()) {
		add(snap.Dir, "huggingface cache", snapshotLabel(snap))
	}
	add(c.demoDir, "demo", "demo model: random weights, speaks no words")
	return out
}

// snapshotLabel names a cache snapshot: "fishaudio/drama-3 (main,
// 0123abcd)", with what an incomplete one misses.
func snapshotLabel(s hfcache.Snapshot) string {
	rev := s.Revision
	if len(rev) > 8 {
		rev = rev[:8]
	}
	if s.Main {
		rev = "main, " + rev
	}
	label := s.Repo + " (" + rev + ")"
	if !s.Complete() {
		label += " incomplete: missing " + strings.Join(s.Missing, ", ")
	}
	return label
}

// ModelSummary is inspect's summary of a checkpoint directory, read
// without loading the weights.
type ModelSummary struct {
	Dir          string `json:"dir"`
	Demo         bool   `json:"demo"` // the random demo codec: speaks no words
	Layers       int    `json:"layers"`
	Hidden       int    `json:"hidden"`
	Experts      int    `json:"experts"`
	Codebooks    int    `json:"codebooks"`
	Parameters   int64  `json:"parameters"`
	StoredBytes  int64  `json:"stored_bytes"`        // weights as stored
	FileBytes    int64  `json:"file_bytes"`          // every file of the directory (what a load reads)
	MemoryNeeded int64  `json:"memory_needed_bytes"` // inspect's estimate, ModelContextRows of context
	MemoryBasis  string `json:"memory_basis"`
	Context      int    `json:"context_rows"`
	// GPUBytes is the device memory the GPU backend admits for this model
	// before loading it: the weights and the voice prefix cache once, and
	// states and scratch at the default context for each of the settings'
	// batch of takes (open.GPUModelBytes); 0 when it cannot be computed.
	// GPUNote says it with the batch and the settings' memory cap.
	GPUBytes int64    `json:"gpu_bytes"`
	GPUNote  string   `json:"gpu_note"`
	Problems []string `json:"problems"` // unplaced/missing tensors, missing files
	Error    string   `json:"error"`    // why it cannot be loaded, if it cannot
}

// InspectModel summarises a checkpoint directory: geometry, parameters and
// the memory it needs, before loading it. A directory that cannot be loaded
// still gives what could be read, with Error saying why.
func (c *Control) InspectModel(dir string) (ModelSummary, error) {
	if err := checkModelPath(dir); err != nil {
		return ModelSummary{}, err
	}
	load := c.loadOptions()
	sum := inspectModel(dir, load)
	if sum.GPUBytes > 0 {
		together := strconv.Itoa(load.Batch) + " takes together"
		if load.Batch == 1 {
			together = "one take at a time"
		}
		sum.GPUNote = "GPU layout: " + studio.ByteSize(sum.GPUBytes) + " of device memory for " + together +
			" (" + studio.ByteSize(open.GPUVoiceCache(load)) + " of it for cached voices"
		if load.VoiceCacheBytes == 0 {
			sum.GPUNote += ", more where the device has room (automatic)"
		}
		sum.GPUNote += "; and the codec)"
		if limit := load.MemoryCap; limit > 0 {
			sum.GPUNote += "; under the memory cap of " + studio.ByteSize(limit) + ": "
			if tier, err := open.GPUTierUnderCap(dir, load); err != nil {
				sum.GPUNote += "a GPU load is refused (" + err.Error() + ")"
			} else {
				sum.GPUNote += tier
			}
		} else {
			sum.GPUNote += "; on a device with less free, the routed experts of the last layers stay in host memory"
		}
	}
	return sum, nil
}

// checkModelPath refuses, before anything reads it, a path that cannot be a
// checkpoint folder: empty or a file (invalid input), or absent (matches
// fs.ErrNotExist). A folder's contents are the inspection's to judge.
func checkModelPath(dir string) error {
	if dir == "" {
		return fmt.Errorf("%w: the model path is empty", studio.ErrInvalid)
	}
	err := drama3.CheckFolder(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", studio.ErrInvalid, err)
	}
	return err
}

// LoadOptions are what the settings ask of a model load (open.Options):
// the batch of takes, the voice cache, the memory cap, and whether the
// engine runs in a child process. The backend and numerics are the
// caller's.
func LoadOptions(st settings.Settings) open.Options {
	batch, _ := api.BatchOf(st.Batch) // the settings were validated: 0 only if not
	return open.Options{Batch: batch, VoiceCacheBytes: st.VoiceCacheBytes, MemoryCap: st.MemoryCapBytes, Isolate: st.IsolateEngine}
}

// loadOptions is what a load asks now: Config.LoadOptions of the settings.
func (c *Control) loadOptions() open.Options { return c.loadOpts(c.settings()) }

// inspectModel is InspectModel's summary, the GPU bytes for a load with
// opts.
func inspectModel(dir string, opts open.Options) ModelSummary {
	sum := ModelSummary{Dir: dir, Context: ModelContextRows, Problems: []string{}}
	sum.FileBytes, _ = dirFileBytes(dir)
	rep, err := drama3.Inspect(dir, ModelContextRows)
	sum.Demo = rep.Demo
	if cfg := rep.Config; cfg != nil {
		sum.Layers, sum.Hidden, sum.Experts = cfg.Text.NumLayers, cfg.Text.HiddenSize, cfg.Text.NumExperts
		sum.Codebooks = cfg.Audio.NumCodebooks
		sum.Parameters = rep.Parameters.Total
	}
	if rep.Memory != nil {
		sum.MemoryNeeded, sum.MemoryBasis = rep.Memory.Total, rep.MemoryBasis
	}
	sum.StoredBytes = rep.StoredBytes
	sum.Problems = append(sum.Problems, rep.Unplaced...)
	sum.Problems = append(sum.Problems, rep.Missing...)
	sum.Problems = append(sum.Problems, rep.Problems...)
	if err != nil {
		sum.Error = err.Error()
	} else if n, err := open.GPUModelBytes(dir, opts); err == nil {
		sum.GPUBytes = n
	}
	return sum
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// isDemoCodec reports whether dir's codec.pth is the embedded demo codec.
func isDemoCodec(dir string) bool {
	demo, _ := drama3.UsesDemoCodec(dir)
	return demo
}

// dirFileBytes sums the sizes of dir's regular files (links followed): what
// loading the checkpoint reads.
func dirFileBytes(dir string) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range entries {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n, nil
}

// admit refuses a model whose estimated memory passes the memory cap, unless
// the GPU backend can run it under the cap with routed experts in host
// memory (open.GPUTierUnderCap; the GPU worker checks the device's and the
// host's memory at load).
func (c *Control) admit(dir string) error {
	load := c.loadOptions()
	limit := load.MemoryCap
	if limit <= 0 {
		return nil
	}
	sum := inspectModel(dir, open.Options{Batch: 1}) // the CPU estimate; the GPU worker admits its own bytes
	if sum.MemoryNeeded > limit {
		gpu, err := open.GPUTierUnderCap(dir, load)
		if err == nil {
			return nil
		}
		if errors.Is(err, open.ErrGPUDoesNotFit) {
			gpu = "; on the GPU " + err.Error()
		} else {
			gpu = ""
		}
		return fmt.Errorf("%w: %s needs about %s (%s, %d rows of context), more than the memory cap of %s%s",
			studio.ErrInvalid, dir, studio.ByteSize(sum.MemoryNeeded), sum.MemoryBasis, sum.Context, studio.ByteSize(limit), gpu)
	}
	return nil
}

// MakeDemoModel writes the demo checkpoint (what `proscenium make-tiny`
// writes: random weights in the real layout, speaks no words) into the demo
// directory, unless it is already there, and returns the directory.
func (c *Control) MakeDemoModel() (string, error) {
	if c.demoDir == "" {
		return "", fmt.Errorf("%w: this studio has no directory for the demo model", studio.ErrInvalid)
	}
	if hasConfig(c.demoDir) && isDemoCodec(c.demoDir) {
		return c.demoDir, nil
	}
	base, err := qwen3.TokenizerJSON()
	if err != nil {
		return "", err
	}
	if err := drama3.WriteTiny(c.demoDir, drama3.TinyOptions{Seed: 1, BaseTokenizer: base}); err != nil {
		return "", fmt.Errorf("writing the demo model to %s: %w", c.demoDir, err)
	}
	c.events.Notice(studio.NoticeInfo, "wrote the demo model (random weights, speaks no words) to "+c.demoDir)
	return c.demoDir, nil
}

// LoadProgress is how far a model load has read.
type LoadProgress struct {
	Dir   string `json:"dir"`
	Read  int64  `json:"read_bytes"`  // bytes read so far
	Total int64  `json:"total_bytes"` // bytes of the checkpoint's files
	Done  bool   `json:"done"`
}

// loadEvery spaces load progress events.
const loadEvery = 100 * time.Millisecond

// watchLoad publishes the progress of a load (WatchLoad) as events and
// keeps the last for LoadStatus.
func (c *Control) watchLoad(dir string) (stop func(ok bool)) {
	return WatchLoad(dir, func(p LoadProgress) {
		c.mu.Lock()
		c.load = p
		c.mu.Unlock()
		c.events.Send(studio.EventLoad, p)
	})
}

// WatchLoad reports bytes read of total while a load of dir runs (the
// studio's progress bar, the CLI's progress line): the read count (rchar of
// /proc/PID/io, every read(2) the loader makes) since the load began, of
// this process and of its child processes (an engine worker loads the model
// there: isolate_engine, the CUDA backend), capped at the checkpoint's size.
// Where those files do not exist the progress shows only the start and the
// end. stop ends the reports with a last one, Done.
func WatchLoad(dir string, report func(LoadProgress)) (stop func(ok bool)) {
	total, _ := dirFileBytes(dir)
	start, hasIO := readChars()
	report(LoadProgress{Dir: dir, Total: total})
	done := make(chan struct{})
	var wg sync.WaitGroup
	var last int64 // reports never go back (a child that ends takes its count with it)
	readSince := func() int64 {
		now, _ := readChars()
		last = max(last, min(now.since(start), total))
		return last
	}
	if hasIO {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(loadEvery)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					report(LoadProgress{Dir: dir, Read: readSince(), Total: total})
				}
			}
		}()
	}
	return func(loaded bool) {
		close(done)
		wg.Wait()
		read := int64(0)
		if hasIO {
			read = readSince()
		} else if loaded {
			read = total // no read counter: a finished load has read its files
		}
		report(LoadProgress{Dir: dir, Read: read, Total: total, Done: true})
	}
}

// readCounts are rchar figures by process id.
type readCounts map[int]int64

// since is the bytes read after start: each process's growth, a process
// that started since counting whole.
func (now readCounts) since(start readCounts) int64 {
	var n int64
	for pid, c := range now {
		n += max(c-start[pid], 0)
	}
	return n
}

// readChars returns the rchar of this process and of its child processes;
// false where /proc/self/io does not exist.
func readChars() (readCounts, bool) {
	self := os.Getpid()
	n, ok := rchar(self)
	if !ok {
		return nil, false
	}
	counts := readCounts{self: n}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || parentOf(pid) != self {
			continue
		}
		if c, ok := rchar(pid); ok {
			counts[pid] = c
		}
	}
	return counts, true
}

// rchar reads a process's rchar from /proc/PID/io.
func rchar(pid int) (int64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// parentOf reads a process's parent id from /proc/PID/stat (the field after
// the state, which follows the command name in parentheses); 0 if unknown.
func parentOf(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// LoadStatus reports the last load's progress.
func (c *Control) LoadStatus() LoadProgress {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.load
}

// TokenCount is the script's length in the loaded model's tokens.
type TokenCount struct {
	Tokens int    `json:"tokens"`
	Model  string `json:"model"` // the directory whose tokenizer counted
}

// CountTokens counts text with the loaded engine's tokenizer, the one it
// prompts with (<|speaker:N|> and other added tokens count as one); an
// engine in a worker counts there.
func (c *Control) CountTokens(text string) (TokenCount, error) {
	if err := settings.ValidateScript(text); err != nil {
		return TokenCount{}, err
	}
	eng, err := c.Loaded()
	if err != nil {
		return TokenCount{}, fmt.Errorf("the token count needs the model's tokenizer: %w", err)
	}
	counter, ok := eng.(api.TokenCounter)
	if !ok {
		return TokenCount{}, fmt.Errorf("the loaded engine cannot count tokens")
	}
	n, err := counter.CountTokens(text)
	if err != nil {
		return TokenCount{}, err
	}
	return TokenCount{Tokens: n, Model: eng.Info().Model}, nil
}
