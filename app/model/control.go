// Package model owns the studio's model: finding checkpoints, inspect's
// summary and the memory a model needs before it is loaded, the memory
// cap's admission, loading (with progress) and unloading, the demo
// checkpoint, the GPU backend's status line, the live memory readouts, and
// what needs the loaded model's tokenizer or codec: token counts, script
// checks and reference encoding.
//
// It opens models only through Config.Open (engine/open, which chooses the
// backend) and asks engine/open about the GPU; it must not import a backend
// (engine/cpu, engine/cuda, engine/gpuworker). It never runs takes: app
// tells it whether one is running (Config.Running). Control has its own
// lock.
package model

import (
	"fmt"
	"strings"
	"sync"

	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/engine/api"
	"proscenium/engine/open"
)

// Opener opens a checkpoint directory with a speech backend.
type Opener func(dir string) (api.Engine, error)

// Config wires a Control.
type Config struct {
	// Open loads a model directory; nil means this build has no backend
	// and Load says so.
	Open Opener
	// LoadOptions is what Open asks of a load with the given settings;
	// nil: LoadOptions.
	LoadOptions func(settings.Settings) open.Options
	// DemoDir is where MakeDemoModel writes the demo checkpoint
	// (DefaultDemoDir); "" offers no demo.
	DemoDir string
	// Events receives the model's events; nil drops them.
	Events *studio.Hub
	// Settings returns the current settings (the memory cap, the model
	// directory last used).
	Settings func() settings.Settings
	// Running reports whether a take is running; StopTake stops it and
	// waits until it has ended. A model does not load while a take runs,
	// and unloading stops the take first.
	Running  func() bool
	StopTake func()
	// OnChange, when set, is called after a load or an unload.
	OnChange func()
	// OnGPU, when set, is called when the GPU status line changes.
	OnGPU func()
}

// Model states.
const (
	ModelNone    = "none"
	ModelLoading = "loading"
	ModelLoaded  = "loaded"
)

// ModelStatus is what the model panel shows.
type ModelStatus struct {
	State   string    `json:"state"`   // ModelNone, ModelLoading or ModelLoaded
	Dir     string    `json:"dir"`     // the directory loaded or loading
	Info    *api.Info `json:"info"`    // set when loaded
	Message string    `json:"message"` // one line for people
	Error   string    `json:"error"`   // why the last load failed, if it did
	CanLoad bool      `json:"can_load"`
	// Pending says which settings a load takes (LoadOptions: the takes
	// run together, the voice cache, the memory cap, the engine's own
	// process) changed since the loaded model was loaded, as they were and
	// are: they apply when it is loaded again. "" when none did.
	Pending string `json:"pending"`
}

// StatsView is what the live readouts show. Without a model Memory is nil
// and Message says "no model loaded": the UI shows no numbers then.
type StatsView struct {
	Loaded   bool        `json:"loaded"`
	Message  string      `json:"message"`
	Memory   *api.Memory `json:"memory"`
	LastTake *api.Finish `json:"last_take"` // the last finished take, if any
	// Total is the memory the model's device has in all (the host's for
	// the CPU backend), 0 when unknown: what a bar with no cap is against.
	Total int64 `json:"total_bytes"`
	// VoicesReady names the cloned voices whose state the voice cache
	// holds now (primed: app/voiceprime), so that a take in one starts
	// without reading its reference first; CastReady says the same of the
	// open project's cast spoken together (the whole script's take).
	VoicesReady []string `json:"voices_ready,omitempty"`
	CastReady   bool     `json:"cast_ready,omitempty"`
}

// Control is the studio's one model slot. It is safe for concurrent use.
type Control struct {
	open     Opener
	demoDir  string
	events   *studio.Hub
	settings func() settings.Settings
	loadOpts func(settings.Settings) open.Options
	// loadedWith is what the loaded model's load asked (loadOpts).
	loadedWith open.Options
	running    func() bool
	stopTake   func()
	onChange   func()
	onGPU      func()

	mu     sync.Mutex
	status ModelStatus
	eng    api.Engine
	load   LoadProgress
	gpu    string // the GPU backend's status line ("" when not checked)

	codecs refCodecs // the loaded model's codec for references (its own lock)
}

// New makes a Control with no model loaded.
func New(cfg Config) *Control {
	if cfg.LoadOptions == nil {
		cfg.LoadOptions = LoadOptions
	}
	c := &Control{open: cfg.Open, loadOpts: cfg.LoadOptions, demoDir: cfg.DemoDir, events: cfg.Events, settings: cfg.Settings,
		running: cfg.Running, stopTake: cfg.StopTake, onChange: cfg.OnChange, onGPU: cfg.OnGPU}
	c.status = c.noModel("")
	return c
}

func (c *Control) changed() {
	if c.onChange != nil {
		c.onChange()
	}
}

func (c *Control) noModel(loadErr string) ModelStatus {
	st := ModelStatus{State: ModelNone, Message: studio.ErrNoModel.Error(), Error: loadErr, CanLoad: c.open != nil}
	if c.open == nil {
		st.Message = studio.ErrNoModel.Error() + " (" + studio.ErrNoBackend.Error() + ")"
	}
	return st
}

// Status reports the model state.
func (c *Control) Status() ModelStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Load opens the checkpoint in dir, replacing the loaded model. It refuses
// while a take runs or another load is in progress, and when the memory
// the model needs (inspect's estimate) passes the memory cap.
func (c *Control) Load(dir string) (ModelStatus, error) {
	if err := checkModelPath(dir); err != nil {
		return c.Status(), err
	}
	if c.open == nil {
		return c.Status(), fmt.Errorf("cannot load %s: %w", dir, studio.ErrNoBackend)
	}
	if err := c.admit(dir); err != nil {
		return c.Status(), err
	}

	c.mu.Lock()
	if c.status.State == ModelLoading {
		c.mu.Unlock()
		return c.Status(), fmt.Errorf("%w: %s is still loading", studio.ErrBusy, c.status.Dir)
	}
	// The loaded model stays open (but takes no takes) until the new one
	// has opened: a load that fails leaves it in place.
	old, oldStatus := c.eng, c.status
	c.eng = nil
	c.status = ModelStatus{State: ModelLoading, Dir: dir, Message: "loading " + dir, CanLoad: true}
	loading := c.status
	c.mu.Unlock()
	// A take starts only with the engine in hand (takes asks for it under
	// its own lock, which it holds until the take is registered): with the
	// engine taken away above, a take that is not running now cannot start
	// on the old model, and one that is running makes the load wait.
	if c.running != nil && c.running() {
		c.mu.Lock()
		c.eng, c.status = old, oldStatus
		c.mu.Unlock()
		return c.Status(), fmt.Errorf("%w: a take is running; stop it before loading another model", studio.ErrBusy)
	}
	c.events.Send(studio.EventModel, loading)

	stopProgress := c.watchLoad(dir)
	opts := c.loadOptions() // what the opener reads from the settings now
	eng, err := c.open(dir)
	stopProgress(err == nil)
	var closeErr error
	if err == nil && old != nil {
		closeErr = old.Close()
	}

	c.mu.Lock()
	switch {
	case err != nil && old != nil:
		c.eng, c.status = old, oldStatus
		c.status.Error = err.Error()
		err = fmt.Errorf("%w (%s stays loaded; if memory is short for both, unload it first)", err, oldStatus.Dir)
	case err != nil:
		c.status = c.noModel(err.Error())
	default:
		info := eng.Info()
		c.eng, c.loadedWith = eng, opts
		c.status = ModelStatus{State: ModelLoaded, Dir: dir, Info: &info, CanLoad: true,
			Message: fmt.Sprintf("loaded %s (%s backend)", dir, info.Backend)}
		if info.Demo {
			c.status.Message += ": demo model with random weights, speaks no words"
		}
	}
	st := c.status
	c.mu.Unlock()
	c.events.Send(studio.EventModel, st)
	c.changed()
	if err != nil {
		return st, fmt.Errorf("load %s: %w", dir, err)
	}
	if closeErr != nil {
		return st, fmt.Errorf("closing the previous model: %w", closeErr)
	}
	return st, nil
}

// SettingsSaved notes in the status (ModelStatus.Pending) the settings a
// load takes that differ from the loaded model's, and says it when that
// changed: the settings were just saved.
func (c *Control) SettingsSaved() {
	now := c.loadOptions()
	c.mu.Lock()
	if c.status.State != ModelLoaded {
		c.mu.Unlock()
		return
	}
	p := pendingLoad(c.loadedWith, now)
	if p == c.status.Pending {
		c.mu.Unlock()
		return
	}
	c.status.Pending = p
	st := c.status
	c.mu.Unlock()
	c.events.Send(studio.EventModel, st)
}

// voiceCacheSaid is the voice cache a load with o asks for, as the studio
// says it: the size set, or with none set the default that a GPU with room
// grows (open.GPUVoiceCache, cuda.AutoVoiceCache).
func voiceCacheSaid(o open.Options) string {
	if o.VoiceCacheBytes == 0 {
		return "automatic (" + studio.ByteSize(open.GPUVoiceCache(o)) + ", more on a GPU with room)"
	}
	return studio.ByteSize(o.VoiceCacheBytes)
}

// pendingLoad says what of now differs from was, the options the loaded
// model was loaded with ("" nothing).
func pendingLoad(was, now open.Options) string {
	var d []string
	if was.Batch != now.Batch {
		d = append(d, fmt.Sprintf("takes together %d → %d", was.Batch, now.Batch))
	}
	if a, b := voiceCacheSaid(was), voiceCacheSaid(now); a != b {
		d = append(d, "voice cache "+a+" → "+b)
	}
	if was.MemoryCap != now.MemoryCap {
		capOf := func(n int64) string {
			if n == 0 {
				return "none"
			}
			return studio.ByteSize(n)
		}
		d = append(d, "memory cap "+capOf(was.MemoryCap)+" → "+capOf(now.MemoryCap))
	}
	if was.Isolate != now.Isolate {
		onOff := map[bool]string{false: "off", true: "on"}
		d = append(d, "engine in its own process "+onOff[was.Isolate]+" → "+onOff[now.Isolate])
	}
	if len(d) == 0 {
		return ""
	}
	return "changed since the model loaded, applied when it is loaded again: " + strings.Join(d, ", ")
}

// Unload stops any take, then closes the model. Without a model it
// changes nothing.
func (c *Control) Unload() (ModelStatus, error) {
	c.mu.Lock()
	if c.status.State == ModelLoading {
		c.mu.Unlock()
		return c.Status(), fmt.Errorf("%w: %s is still loading", studio.ErrBusy, c.status.Dir)
	}
	c.mu.Unlock()
	if c.stopTake != nil {
		c.stopTake()
	}

	c.mu.Lock()
	eng := c.eng
	c.eng = nil
	if eng == nil {
		st := c.status
		c.mu.Unlock()
		return st, nil
	}
	c.status = c.noModel("")
	st := c.status
	c.mu.Unlock()
	err := eng.Close()
	c.events.Send(studio.EventModel, st)
	c.changed()
	if err != nil {
		return st, fmt.Errorf("closing the model: %w", err)
	}
	return st, nil
}

// Stats reports device memory and lastTake's figures. Without a model it
// reports no numbers, only "no model loaded". The memory cap shown is
// capBytes (the settings') when the engine reports none.
//
// The engine is asked without the lock held: an engine call may wait (an
// engine in a worker process answers within its timeout), and the studio
// must not wait with it.
func (c *Control) Stats(capBytes int64, lastTake *api.Finish) StatsView {
	c.mu.Lock()
	v := StatsView{Message: studio.ErrNoModel.Error(), LastTake: lastTake}
	eng := c.eng
	c.mu.Unlock()
	if eng != nil {
		st := eng.Stats()
		if st.Memory.Cap == 0 && capBytes > 0 {
			st.Memory.Cap = capBytes
		}
		v.Loaded, v.Message, v.Memory = true, "", &st.Memory
		if st.Memory.Total > 0 {
			v.Total = st.Memory.Total
		} else if st.Memory.Device == "host" {
			v.Total = hostTotal()
		}
	}
	return v
}

// ForTake returns the loaded engine and its sample rate for a studio take
// (from the status, not an engine call), or why there is none.
func (c *Control) ForTake() (api.Engine, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.eng == nil {
		if c.status.State == ModelLoading {
			return nil, 0, fmt.Errorf("%w: %s", studio.ErrNoModel, c.status.Message)
		}
		return nil, 0, studio.ErrNoModel
	}
	return c.eng, c.status.Info.SampleRate, nil
}
