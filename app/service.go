package app

import (
	"fmt"
	"os"
	"sync"

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
	// Events receives what the service pushes to the UI; nil drops it.
	Events *Hub
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
}

// Service is what the UI calls. Every exported method is reachable from the
// desktop window (Wails binding) and from the browser (POST /api/<Method>),
// so it has at most one argument and returns a value, an error, or both.
type Service struct {
	open         Opener
	settingsPath string
	events       *Hub

	mu       sync.Mutex
	settings Settings
	model    ModelStatus
	eng      engine.Engine
	takes    takeLog
}

// New makes a service with the settings read from cfg.SettingsPath.
func New(cfg Config) (*Service, error) {
	s := &Service{open: cfg.Open, settingsPath: cfg.SettingsPath, events: cfg.Events}
	s.settings = DefaultSettings()
	if cfg.SettingsPath != "" {
		st, err := LoadSettings(cfg.SettingsPath)
		if err != nil {
			return nil, err
		}
		s.settings = st
	}
	s.model = s.noModel("")
	return s, nil
}

// Shutdown stops any take and closes the model. It is a function, not a
// method, so that the UI cannot call it.
func Shutdown(s *Service) error {
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
// refuses while a take runs or another load is in progress.
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

	s.mu.Lock()
	switch {
	case s.model.State == ModelLoading:
		s.mu.Unlock()
		return s.ModelStatus(), fmt.Errorf("%w: %s is still loading", ErrBusy, s.model.Dir)
	case s.takes.running != nil:
		s.mu.Unlock()
		return s.ModelStatus(), fmt.Errorf("%w: a take is running; stop it before loading another model", ErrBusy)
	}
	old := s.eng
	s.eng = nil
	s.model = ModelStatus{State: ModelLoading, Dir: dir, Message: "loading " + dir, CanLoad: true}
	loading := s.model
	s.mu.Unlock()
	s.publish(EventModel, loading)

	var closeErr error
	if old != nil {
		closeErr = old.Close()
	}
	eng, err := s.open(dir)

	s.mu.Lock()
	if err != nil {
		s.model = s.noModel(err.Error())
	} else {
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
// it reports no numbers, only "no model loaded".
func (s *Service) Stats() StatsView {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := StatsView{Message: ErrNoModel.Error(), LastTake: s.takes.lastFinish()}
	if s.eng != nil {
		st := s.eng.Stats()
		v.Loaded, v.Message, v.Memory = true, "", &st.Memory
	}
	return v
}

// Settings returns the current settings.
func (s *Service) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// SetSettings validates and stores the settings (and writes the settings
// file). Invalid settings change nothing; the error names the field.
func (s *Service) SetSettings(st Settings) (Settings, error) {
	if err := st.Validate(); err != nil {
		return s.Settings(), err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.settingsPath != "" && st != s.settings {
		if err := SaveSettings(s.settingsPath, st); err != nil {
			return s.settings, fmt.Errorf("saving settings: %w", err)
		}
	}
	s.settings = st
	return st, nil
}

func (s *Service) publish(name string, data any) { s.events.Publish(Event{Name: name, Data: data}) }
