package app

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"proscenium/app/projects"
	"proscenium/engine"
)

// Opener opens a checkpoint directory with a speech backend.
type Opener func(dir string) (engine.Engine, error)

// Config wires a Service.
type Config struct {
	// Open loads a model directory; nil means this build has no backend
	// and LoadModel says so.
	Open Opener
	// SettingsPath is the settings file; "" keeps settings in memory only.
	SettingsPath string
	// TakesDir holds the takes (DefaultTakesDir); "" keeps them in memory.
	TakesDir string
	// DemoDir is where MakeDemoModel writes the demo checkpoint
	// (DefaultDemoDir); "" offers no demo.
	DemoDir string
	// ExportDir is where exports are proposed (DefaultExportDir): at start,
	// stale temporary files of a killed export to a proposed name are
	// removed from it; "" leaves it alone.
	ExportDir string
	// VoicesDir is the voice library (voicelib.DefaultDir); "" offers no
	// reference voices.
	VoicesDir string
	// Events receives what the service pushes to the UI; nil drops it.
	Events *Hub
	// Speaker is the sound card (soundcard.NewPlayer); nil: this process
	// plays nothing itself (the browser plays the streamed PCM).
	Speaker Speaker
	// Dialogs are the native file dialogs; nil: the UI asks for typed paths.
	Dialogs Dialogs
	// ProbeGPU reports the GPU backend (ProbeGPUWorker); nil: not checked.
	ProbeGPU GPUProbe
	// ProjectsDir holds the projects (projects.DefaultDir); "": none are kept.
	ProjectsDir string
}

// Model states.
const (
	ModelNone    = "none"
	ModelLoading = "loading"
	ModelLoaded  = "loaded"
)

// ModelStatus is what the model panel shows.
type ModelStatus struct {
	State   string       `json:"state"`   // ModelNone, ModelLoading or ModelLoaded
	Dir     string       `json:"dir"`     // the directory loaded or loading
	Info    *engine.Info `json:"info"`    // set when loaded
	Message string       `json:"message"` // one line for people
	Error   string       `json:"error"`   // why the last load failed, if it did
	CanLoad bool         `json:"can_load"`
}

// StatsView is what the live readouts show. Without a model Memory is nil
// and Message says "no model loaded": the UI shows no numbers then.
type StatsView struct {
	Loaded   bool           `json:"loaded"`
	Message  string         `json:"message"`
	Memory   *engine.Memory `json:"memory"`
	LastTake *engine.Finish `json:"last_take"` // the last finished take, if any
	// Total is the memory the model's device has in all (the host's for
	// the CPU backend), 0 when unknown: what a bar with no cap is against.
	Total int64 `json:"total"`
}

// Service is what the UI calls. Every exported method is reachable from the
// desktop window (Wails binding) and from the browser (POST /api/<Method>),
// so it has at most one argument and returns a value, an error, or both.
type Service struct {
	open         Opener
	settingsPath string
	demoDir      string
	voicesDir    string
	events       *Hub
	dialogs      Dialogs
	speaker      Speaker // noSpeaker without a sound card of our own

	mu          sync.Mutex
	settings    Settings
	badSettings bool     // the file did not load: keep it aside before replacing it
	warnings    []string // shown in the studio's status line
	model       ModelStatus
	eng         engine.Engine
	takes       takeLog
	load        LoadProgress
	gpu         string // the GPU backend's status line ("" when not checked)

	server serverPanel // the speech server panel (its own lock)

	projects *projects.Store // nil: no projects directory
}

// New makes a service with the settings read from cfg.SettingsPath and the
// takes found in cfg.TakesDir. A settings file that does not load gives the
// defaults and a warning; a take directory that does not load is skipped
// with a warning. Neither stops the studio.
func New(cfg Config) (*Service, error) {
	s := &Service{open: cfg.Open, settingsPath: cfg.SettingsPath, demoDir: cfg.DemoDir, voicesDir: cfg.VoicesDir, events: cfg.Events,
		dialogs: cfg.Dialogs, speaker: cfg.Speaker}
	if s.speaker == nil {
		s.speaker = noSpeaker{}
	}
	s.speaker.OnChange(func(AudioStatus) { s.publish(EventStudio, s.Studio()) })
	s.settings = DefaultSettings()
	if cfg.SettingsPath != "" {
		// What a save killed midway left (writeFileAtomic's temporary name).
		s.warnings = append(s.warnings, removeStaleFiles(filepath.Dir(cfg.SettingsPath), "."+filepath.Base(cfg.SettingsPath)+".", time.Now(), nil)...)
		st, err := LoadSettings(cfg.SettingsPath)
		if err != nil {
			s.badSettings = true
			s.warnings = append(s.warnings, fmt.Sprintf("%v: using the default settings (the file is kept as %s.bad-<time> when a setting is next saved)", err, cfg.SettingsPath))
		} else {
			s.settings = st
		}
	}
	s.speaker.SetEnabled(s.settings.OutputDevice != OutputOff)
	s.speaker.SetVolume(s.settings.Volume)
	if cfg.ExportDir != "" {
		s.warnings = append(s.warnings, removeStaleExportTemps(cfg.ExportDir, time.Now())...)
	}
	s.takes.store = takeStore{dir: cfg.TakesDir}
	_, leftover, problems := s.takes.store.cleanTemps(time.Now())
	s.takes.stored = leftover // counted against the limit until removed
	s.warnings = append(s.warnings, problems...)
	recs, problems, maxID := s.takes.store.loadAll()
	s.warnings = append(s.warnings, problems...)
	s.takes.next = maxID
	for _, r := range recs {
		s.takes.list = append(s.takes.list, r)
		s.takes.stored += r.bytes
	}
	if cfg.ProjectsDir != "" {
		s.projects = projects.NewStore(cfg.ProjectsDir)
	}
	s.model = s.noModel("")
	if cfg.ProbeGPU != nil {
		s.probeGPU(cfg.ProbeGPU)
	}
	return s, nil
}

// Shutdown stops any take and closes the model. It is a function, not a
// method, so that the UI cannot call it.
func Shutdown(s *Service) error {
	s.StopServer()
	s.speaker.Stop()
	_, err := s.UnloadModel()
	return err
}

func (s *Service) noModel(loadErr string) ModelStatus {
	st := ModelStatus{State: ModelNone, Message: ErrNoModel.Error(), Error: loadErr, CanLoad: s.open != nil}
	if s.open == nil {
		st.Message = ErrNoModel.Error() + " (" + ErrNoBackend.Error() + ")"
	}
	return st
}

// ModelStatus reports the model state.
func (s *Service) ModelStatus() ModelStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// LoadModel opens the checkpoint in dir, replacing the loaded model. It
// refuses while a take runs or another load is in progress, and when the
// memory the model needs (inspect's estimate) passes the memory cap.
func (s *Service) LoadModel(dir string) (ModelStatus, error) {
	if dir == "" {
		return s.ModelStatus(), fmt.Errorf("%w: the model path is empty", ErrInvalid)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return s.ModelStatus(), fmt.Errorf("model path: %w", err)
	}
	if !fi.IsDir() {
		return s.ModelStatus(), fmt.Errorf("%w: model path %s is not a directory", ErrInvalid, dir)
	}
	if s.open == nil {
		return s.ModelStatus(), fmt.Errorf("cannot load %s: %w", dir, ErrNoBackend)
	}
	if err := s.admit(dir); err != nil {
		return s.ModelStatus(), err
	}

	s.mu.Lock()
	switch {
	case s.model.State == ModelLoading:
		s.mu.Unlock()
		return s.ModelStatus(), fmt.Errorf("%w: %s is still loading", ErrBusy, s.model.Dir)
	case s.takes.running != nil:
		s.mu.Unlock()
		return s.ModelStatus(), fmt.Errorf("%w: a take is running; stop it before loading another model", ErrBusy)
	}
	// The loaded model stays open (but takes no takes) until the new one
	// has opened: a load that fails leaves it in place.
	old, oldStatus := s.eng, s.model
	s.eng = nil
	s.model = ModelStatus{State: ModelLoading, Dir: dir, Message: "loading " + dir, CanLoad: true}
	loading := s.model
	s.mu.Unlock()
	s.publish(EventModel, loading)

	stopProgress := s.watchLoad(dir)
	eng, err := s.open(dir)
	stopProgress(err == nil)
	var closeErr error
	if err == nil && old != nil {
		closeErr = old.Close()
	}

	s.mu.Lock()
	switch {
	case err != nil && old != nil:
		s.eng, s.model = old, oldStatus
		s.model.Error = err.Error()
		err = fmt.Errorf("%w (%s stays loaded; if memory is short for both, unload it first)", err, oldStatus.Dir)
	case err != nil:
		s.model = s.noModel(err.Error())
	default:
		info := eng.Info()
		s.eng = eng
		s.model = ModelStatus{State: ModelLoaded, Dir: dir, Info: &info, CanLoad: true,
			Message: fmt.Sprintf("loaded %s (%s backend)", dir, info.Backend)}
		if info.Demo {
			s.model.Message += ": demo model with random weights, speaks no words"
		}
	}
	st := s.model
	s.mu.Unlock()
	s.publish(EventModel, st)
	s.publish(EventStats, s.Stats())
	if err != nil {
		return st, fmt.Errorf("load %s: %w", dir, err)
	}
	if closeErr != nil {
		return st, fmt.Errorf("closing the previous model: %w", closeErr)
	}
	return st, nil
}

// UnloadModel stops any take, then closes the model. Without a model it
// changes nothing.
func (s *Service) UnloadModel() (ModelStatus, error) {
	s.mu.Lock()
	if s.model.State == ModelLoading {
		s.mu.Unlock()
		return s.ModelStatus(), fmt.Errorf("%w: %s is still loading", ErrBusy, s.model.Dir)
	}
	run := s.takes.running
	s.mu.Unlock()
	if run != nil {
		run.cancel()
		<-run.done
	}

	s.mu.Lock()
	eng := s.eng
	s.eng = nil
	if eng == nil {
		st := s.model
		s.mu.Unlock()
		return st, nil
	}
	s.model = s.noModel("")
	st := s.model
	s.mu.Unlock()
	err := eng.Close()
	s.publish(EventModel, st)
	s.publish(EventStats, s.Stats())
	if err != nil {
		return st, fmt.Errorf("closing the model: %w", err)
	}
	return st, nil
}

// Stats reports device memory and the last take's figures. Without a model
// it reports no numbers, only "no model loaded". The memory cap shown is
// the settings' cap when the engine reports none.
//
// The engine is asked without the service lock held: an engine call may
// wait (an engine in a worker process answers within its timeout), and the
// studio must not wait with it.
func (s *Service) Stats() StatsView {
	s.mu.Lock()
	v := StatsView{Message: ErrNoModel.Error(), LastTake: s.takes.lastFinish()}
	eng, capBytes := s.eng, s.settings.MemoryCapBytes
	s.mu.Unlock()
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

// Settings returns the current settings.
func (s *Service) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings.clone()
}

// SetSettings validates and stores the settings (and writes the settings
// file). Invalid settings change nothing; the error names the field.
// A lower takes limit that would remove takes is refused (ErrConfirm): see
// TakesLimitEffect and ApplyTakesLimit.
func (s *Service) SetSettings(st Settings) (Settings, error) { return s.setSettings(st, false) }

func (s *Service) setSettings(st Settings, limitConfirmed bool) (Settings, error) {
	if err := st.Validate(); err != nil {
		return s.Settings(), err
	}
	st = st.clone()
	s.mu.Lock()
	if !limitConfirmed && st.TakesLimitBytes < s.settings.TakesLimitBytes {
		if gone := s.evictionsLocked(st.TakesLimitBytes, 0, nil); len(gone) > 0 {
			s.mu.Unlock()
			return s.Settings(), fmt.Errorf("%w: %s; confirm that first", ErrConfirm, effectOf(st.TakesLimitBytes, gone).describe())
		}
	}
	if s.settingsPath != "" && !reflect.DeepEqual(st, s.settings) {
		if s.badSettings {
			// Keep the file that did not load for the user to look at.
			if err := keepAside(s.settingsPath, time.Now()); err != nil && !os.IsNotExist(err) {
				defer s.mu.Unlock()
				return s.settings.clone(), fmt.Errorf("keeping the unreadable settings file aside: %w", err)
			}
			s.badSettings = false
		}
		if err := SaveSettings(s.settingsPath, st); err != nil {
			defer s.mu.Unlock()
			return s.settings.clone(), fmt.Errorf("saving settings: %w", err)
		}
	}
	s.settings = st
	s.mu.Unlock()
	s.speaker.SetEnabled(st.OutputDevice != OutputOff)
	s.speaker.SetVolume(st.Volume)
	return st.clone(), nil
}

func (s *Service) publish(name string, data any) { s.events.Publish(Event{Name: name, Data: data}) }
