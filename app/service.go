package app

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"proscenium/app/lexicon"
	"proscenium/app/model"
	"proscenium/app/playback"
	"proscenium/app/projects"
	"proscenium/app/scene"
	"proscenium/app/server"
	"proscenium/app/settings"
	"proscenium/app/speechapi"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/app/voice"
	"proscenium/app/voiceprime"
	"proscenium/app/voices"
	"proscenium/engine/api"
	"proscenium/engine/audio/loudness"
	"proscenium/engine/audio/pcm"
	"proscenium/engine/open"
)

// Config wires a Service.
type Config struct {
	// Open loads a model directory; nil means this build has no backend
	// and LoadModel says so.
	Open model.Opener
	// LoadOptions is what Open asks of a load with the given settings
	// (the opener's overrides applied); nil: model.LoadOptions. The model
	// panel compares it with the loaded model's (ModelStatus.Pending), and
	// the model summary counts its voice cache and memory cap.
	LoadOptions func(settings.Settings) open.Options
	// SettingsPath is the settings file; "" keeps settings in memory only.
	SettingsPath string
	// TakesDir holds the takes (takes.DefaultDir); "" keeps them in memory.
	TakesDir string
	// DemoDir is where MakeDemoModel writes the demo checkpoint
	// (model.DefaultDemoDir); "" offers no demo.
	DemoDir string
	// ExportDir is where exports are proposed (takes.DefaultExportDir): at
	// start, stale temporary files of a killed export to a proposed name
	// are removed from it; "" leaves it alone.
	ExportDir string
	// VoicesDir is the voice library (voicelib.DefaultDir); "" offers no
	// reference voices.
	VoicesDir string
	// Events receives what the service pushes to the UI; nil drops it.
	Events *studio.Hub
	// Speaker is the sound card (soundcard.NewPlayer); nil: this process
	// plays nothing itself (the browser plays the streamed PCM).
	Speaker playback.Speaker
	// Dialogs are the native file dialogs; nil: the UI asks for typed paths.
	Dialogs Dialogs
	// ProbeGPU reports the GPU backend (model.ProbeGPUWorker); nil: not
	// checked.
	ProbeGPU model.GPUProbe
	// ProjectsDir holds the projects (projects.DefaultDir); "": none are
	// kept (the project methods say so).
	ProjectsDir string
	// TrashDir is where a deleted project goes, the desktop's trash
	// (projects.DefaultTrashDir when ""): a file manager puts it back.
	TrashDir string
	// RestoreCastAfter is how long after the last take the open project's
	// cast voices the voice cache dropped are primed again
	// (voiceprime.Config.RestoreAfter); 0: voiceprime.DefaultRestoreAfter.
	RestoreCastAfter time.Duration
}

// Service is what the UI calls. Every exported method is reachable from the
// desktop window (Wails binding) and from the browser (POST /api/<Method>),
// so it has at most one argument and returns a value, an error, or both.
//
// It holds no feature's state: each method hands the call to the package
// that owns the feature (each with its own lock), and New wires those
// packages to each other.
type Service struct {
	events  *studio.Hub
	dialogs Dialogs
	speaker playback.Speaker // playback.NoSpeaker without a sound card of our own
	demoDir string

	settings *settings.Store
	model    *model.Control
	takes    *takes.List
	server   *server.Panel
	voices   *voices.Editor
	primer   *voiceprime.Primer
	projects *projects.Store // nil: no projects directory
	trashDir string
	previews scenePreviews // the last scene preview (scene_preview.go)

	warnings []string // from start-up, shown in the studio's status line; never changed after New
}

// New makes a service with the settings read from cfg.SettingsPath and the
// takes found in cfg.TakesDir. A settings file that does not load gives the
// defaults and a warning; a take directory that does not load is skipped
// with a warning. Neither stops the studio.
func New(cfg Config) (*Service, error) {
	s := &Service{events: cfg.Events, dialogs: cfg.Dialogs, speaker: cfg.Speaker, demoDir: cfg.DemoDir}
	if s.speaker == nil {
		s.speaker = playback.NoSpeaker{}
	}
	var warnings []string
	s.settings, warnings = settings.Open(cfg.SettingsPath)
	s.warnings = append(s.warnings, warnings...)
	st := s.settings.Get()
	s.speaker.SetEnabled(st.OutputDevice != settings.OutputOff)
	s.speaker.SetVolume(st.Volume)
	if cfg.ExportDir != "" {
		s.warnings = append(s.warnings, takes.RemoveStaleExportTemps(cfg.ExportDir, time.Now())...)
	}
	s.model = model.New(model.Config{Open: cfg.Open, LoadOptions: cfg.LoadOptions, DemoDir: cfg.DemoDir, Events: cfg.Events, Settings: s.settings.Get,
		Running:  func() bool { return s.takes.Running() },
		StopTake: func() { s.takes.Stop() },
		OnChange: s.publishStats,
		OnGPU:    func() { s.events.Send(studio.EventStudio, s.Studio()) }})
	if cfg.ProjectsDir != "" {
		s.projects = projects.NewStore(cfg.ProjectsDir)
		s.trashDir = cmp.Or(cfg.TrashDir, projects.DefaultTrashDir())
	}
	s.takes, warnings = takes.Open(takes.Config{Dir: cfg.TakesDir, Events: cfg.Events, Speaker: s.speaker, Keep: s.chosenTakes,
		Limit:  func() int64 { return s.settings.Get().TakesLimitBytes },
		Engine: s.model.ForTake,
		OnEnd:  s.takeEnded,
		Spoken: func(text string) string { return lexicon.Apply(text, s.settings.Get().Lexicon) }})
	s.warnings = append(s.warnings, warnings...)
	s.server = server.NewPanel(cfg.Events, func() int { return s.settings.Get().ServerPort })
	s.voices = voices.New(voices.Config{Dir: cfg.VoicesDir, Settings: s.settings, Save: s.SetSettings, Encoder: s.model.ReferenceEncoder})
	s.primer = voiceprime.New(voiceprime.Config{Engine: s.model.Loaded, Primed: s.voicePrimed, Busy: s.takes.Running, RestoreAfter: cfg.RestoreCastAfter})
	// Recordings no voice uses (a replaced voice of an older version, a
	// save that failed) are removed at start.
	if removed, err := s.voices.SweepLibrary(); err != nil {
		s.warnings = append(s.warnings, fmt.Sprintf("voice library: %v", err))
	} else if len(removed) > 0 {
		s.warnings = append(s.warnings, fmt.Sprintf("voice library: removed %d recording(s) no voice uses", len(removed)))
	}
	s.speaker.OnChange(func(playback.AudioStatus) { s.events.Send(studio.EventStudio, s.Studio()) })
	if cfg.ProbeGPU != nil {
		s.model.ProbeGPU(cfg.ProbeGPU)
	}
	return s, nil
}

// Shutdown stops any take and closes the model. It is a function, not a
// method, so that the UI cannot call it.
func Shutdown(s *Service) error {
	s.StopServer()
	s.primer.Stop()
	s.speaker.Stop()
	_, err := s.UnloadModel()
	return err
}

func (s *Service) publishStats() { s.events.Send(studio.EventStats, s.Stats()) }

// takeEnded shows the stats after a take, and has the cast's voices the
// take may have dropped from the voice cache primed again a while later.
func (s *Service) takeEnded() {
	s.publishStats()
	s.primer.TakeEnded()
}

// ---- settings ----

// Settings returns the current settings.
func (s *Service) Settings() settings.Settings { return s.settings.Get() }

// ExportLexicon writes the settings' pronunciations to path (an absolute
// file path; the window's save dialog has asked before replacing a file)
// as a lexicon file another studio imports and `synth --lexicon` reads,
// and returns how many it wrote.
func (s *Service) ExportLexicon(path string) (int, error) {
	if err := checkFilePath("the pronunciations' path", path); err != nil {
		return 0, err
	}
	entries := s.Settings().Lexicon
	if err := pcm.WriteFileAtomic(path, lexicon.Marshal(entries)); err != nil {
		return 0, takes.ExplainWriteError(path, err)
	}
	plural := "s"
	if len(entries) == 1 {
		plural = ""
	}
	s.events.Notice(studio.NoticeInfo, fmt.Sprintf("exported %d pronunciation%s to %s", len(entries), plural, path))
	return len(entries), nil
}

// checkFilePath says why path, named what, cannot be written as a file
// (the window's save dialog gives one): it must be absolute, and not a
// directory.
func checkFilePath(what, path string) error {
	if path == "" || !filepath.IsAbs(path) || strings.ContainsRune(path, 0) {
		return fmt.Errorf("%w: %s must be an absolute file path, got %q", studio.ErrInvalid, what, path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%w: %s is a directory; give a file name", studio.ErrInvalid, path)
	}
	return nil
}

// ReadLexicon reads a pronunciations file the user picked (a JSON array
// of pronunciations, or a settings file: lexicon.Parse) for the
// Pronunciations panel to import; it changes nothing. A file that is not
// one is studio.ErrInvalid, saying why.
func (s *Service) ReadLexicon(data string) ([]lexicon.Entry, error) {
	if len(data) > lexicon.MaxFileBytes {
		return nil, fmt.Errorf("%w: the file is %d bytes, more than a pronunciations or settings file holds (%d)", studio.ErrInvalid, len(data), lexicon.MaxFileBytes)
	}
	entries, err := lexicon.Parse([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", studio.ErrInvalid, err)
	}
	return entries, nil
}

// SetSettings validates and stores the settings (and writes the settings
// file). Invalid settings change nothing; the error names the field.
// A lower takes limit that would remove takes is refused
// (takes.ErrConfirm): see TakesLimitEffect and ApplyTakesLimit.
func (s *Service) SetSettings(st settings.Settings) (settings.Settings, error) {
	return s.setSettings(st, func(old, new settings.Settings) error {
		return s.takes.CheckLimitLowered(old.TakesLimitBytes, new.TakesLimitBytes)
	})
}

// setSettings stores st (check as settings.Store.Update) and applies what
// the sound card takes from it.
func (s *Service) setSettings(st settings.Settings, check func(old, new settings.Settings) error) (settings.Settings, error) {
	saved, err := s.settings.Update(st, check)
	if err != nil {
		return saved, err
	}
	s.speaker.SetEnabled(saved.OutputDevice != settings.OutputOff)
	s.speaker.SetVolume(saved.Volume)
	s.model.SettingsSaved()
	return saved, nil
}

// TakesLimitEffect says which takes a takes limit of limit bytes would
// remove now, changing nothing.
func (s *Service) TakesLimitEffect(limit int64) (takes.TakesLimitEffect, error) {
	st := s.Settings()
	st.TakesLimitBytes = limit
	if err := st.Validate(); err != nil {
		return takes.TakesLimitEffect{}, err
	}
	return s.takes.TakesLimitEffect(limit), nil
}

// ApplyTakesLimit sets the takes limit and removes the takes it needs gone,
// provided they are exactly c.Remove (what TakesLimitEffect listed and the
// user confirmed); otherwise it changes nothing and says what would go now.
func (s *Service) ApplyTakesLimit(c takes.TakesLimitChange) (settings.Settings, error) {
	st := s.Settings()
	st.TakesLimitBytes = c.Limit
	if err := st.Validate(); err != nil {
		return s.Settings(), err
	}
	if err := s.takes.ApplyTakesLimit(c); err != nil {
		return s.Settings(), err
	}
	return s.setSettings(st, nil)
}

// ---- model ----

// ModelStatus reports the model state.
func (s *Service) ModelStatus() model.ModelStatus { return s.model.Status() }

// LoadModel opens the checkpoint in dir, replacing the loaded model. It
// refuses while a take runs or another load is in progress, and when the
// memory the model needs (inspect's estimate) passes the memory cap.
// The open project's cast is primed on it (app/voiceprime).
func (s *Service) LoadModel(dir string) (model.ModelStatus, error) {
	st, err := s.model.Load(dir)
	if st.State == model.ModelLoaded {
		s.primer.Loaded()
	}
	return st, err
}

// UnloadModel stops any take, then closes the model. Without a model it
// changes nothing.
func (s *Service) UnloadModel() (model.ModelStatus, error) { return s.model.Unload() }

// LoadStatus reports the last load's progress.
func (s *Service) LoadStatus() model.LoadProgress { return s.model.LoadStatus() }

// FindModels lists checkpoint directories to offer (model.Control.FindModels).
func (s *Service) FindModels() []model.ModelCandidate { return s.model.FindModels() }

// InspectModel summarises a checkpoint directory before loading it.
func (s *Service) InspectModel(dir string) (model.ModelSummary, error) {
	return s.model.InspectModel(dir)
}

// MakeDemoModel writes the demo checkpoint, unless it is there, and
// returns its directory.
func (s *Service) MakeDemoModel() (string, error) { return s.model.MakeDemoModel() }

// Stats reports device memory, the last take's figures and the voices the
// voice cache holds (by the keys of their primes). Without a model it
// reports no numbers, only "no model loaded".
func (s *Service) Stats() model.StatsView {
	v := s.model.Stats(s.Settings().MemoryCapBytes, s.takes.LastFinish())
	if v.Memory == nil || len(v.Memory.VoiceKeys) == 0 {
		return v
	}
	eng, err := s.model.Loaded()
	if err != nil {
		return v
	}
	refs, cast := s.primer.Held(eng, v.Memory.VoiceKeys)
	for _, vc := range s.voices.Voices() {
		if refs[vc.Reference] {
			v.VoicesReady = append(v.VoicesReady, vc.Name)
		}
	}
	v.CastReady = cast
	return v
}

// CountTokens counts text with the loaded model's tokenizer.
func (s *Service) CountTokens(text string) (model.TokenCount, error) {
	return s.model.CountTokens(text)
}

// CheckScript applies the engine's prompt rules to a script without
// speaking it.
func (s *Service) CheckScript(text string) (model.ScriptCheck, error) {
	return s.model.CheckScript(text)
}

// EncodeReference returns a recording's codes from the loaded model's codec.
func (s *Service) EncodeReference(recording []byte) ([][]int, error) {
	return s.model.EncodeReference(recording)
}

// LoadedEngine returns the service's loaded engine, or an error saying why
// there is none (no model, or one still loading). It is a function, not a
// method, so that the UI bindings do not expose it; the speech API of
// `proscenium serve` uses it to share the studio's one engine.
func LoadedEngine(s *Service) (api.Engine, error) { return s.model.Loaded() }

// ---- takes ----

// Speak starts a take of req on the loaded model and returns at once; the
// take reports through "take", "audio" and "pcm" events and ends in the
// takes list. Without a model it returns ErrNoModel; while a take runs,
// ErrBusy.
func (s *Service) Speak(req api.SpeechRequest) (takes.Take, error) {
	return s.takes.StartTake(req, "", nil)
}

// SpeakVariations starts Speak ×N: v.Count takes of v.Request together
// (other seeds, or one setting swept over v.Values), each streaming into its
// own row of the takes list, playable while the others are made; the engine
// runs them in one batch. Errors as Speak's, and studio.ErrInvalid naming
// the field of v at fault. With v.Cast the takes speak in the cast voices,
// as SpeakCast's take does.
func (s *Service) SpeakVariations(v takes.Variations) ([]takes.Take, error) {
	if len(v.Cast) > 0 {
		req, err := s.voices.Cast(voices.CastRequest{Request: v.Request, Cast: v.Cast})
		if err != nil {
			return nil, err
		}
		v.Request = req
	}
	return s.takes.StartVariations(v, v.Cast)
}

// Stop ends the running takes at their next frame, keeping what they made,
// and waits until they have ended. It reports whether a take was running.
func (s *Service) Stop() (bool, error) { return s.takes.Stop() }

// Takes lists the takes, newest first.
func (s *Service) Takes() []takes.Take { return s.takes.Takes() }

// TakePeaks returns a take's waveform.
func (s *Service) TakePeaks(id int) (takes.Peaks, error) { return s.takes.TakePeaks(id) }

// RenameTake names a take (an empty name clears it).
func (s *Service) RenameTake(n takes.TakeName) (takes.Take, error) { return s.takes.RenameTake(n) }

// DeleteTake removes a take from the list and from disk.
func (s *Service) DeleteTake(id int) (bool, error) { return s.takes.DeleteTake(id) }

// RerunTake starts a new take with the text and settings of take ID, one
// setting changed.
func (s *Service) RerunTake(r takes.Rerun) (takes.Take, error) { return s.takes.RerunTake(r) }

// DefaultExportPath proposes <music dir>/proscenium-take-<id>[-name].<ext>.
func (s *Service) DefaultExportPath(r takes.ExportRequest) (string, error) {
	return s.takes.DefaultExportPath(r)
}

// ExportTake writes a take as WAV or raw PCM, atomically.
func (s *Service) ExportTake(r takes.ExportRequest) (takes.ExportResult, error) {
	return s.takes.ExportTake(r)
}

// APIEngine returns the loaded engine (as LoadedEngine) wrapped so that
// every take the speech API makes is recorded like a studio take: it
// appears in the takes list marked takes.SourceAPI, reports through "take"
// and "audio" events while it runs, and is stored under the takes
// directory. It is a function, not a method, so that the UI bindings do
// not expose it.
func APIEngine(s *Service) (api.Engine, error) {
	eng, err := s.model.Loaded()
	if err != nil {
		return nil, err
	}
	return s.takes.Recorded(eng), nil
}

// ---- voices ----

// Voices returns the user's voices.
func (s *Service) Voices() []voice.Voice { return s.voices.Voices() }

// SaveVoice adds a voice, or replaces the one of the same name, and saves
// the settings.
func (s *Service) SaveVoice(v voice.Voice) ([]voice.Voice, error) { return s.voices.SaveVoice(v) }

// DeleteVoice removes the voice called name and saves the settings.
func (s *Service) DeleteVoice(name string) ([]voice.Voice, error) { return s.voices.DeleteVoice(name) }

// VoiceNames lists what the speech API's voice field accepts besides the
// user's voices.
func (s *Service) VoiceNames() []string { return s.voices.VoiceNames() }

// CreateVoice adds a voice cloned from a recording and its transcript, and
// primes it on the loaded model (app/voiceprime): its first take starts
// from the voice cache.
func (s *Service) CreateVoice(name, transcript string, recording []byte) ([]voice.Voice, error) {
	vs, err := s.voices.CreateVoice(name, transcript, recording)
	if err == nil {
		s.primer.Prime(s.primeVoice(name))
	}
	return vs, err
}

// VoiceReferences returns the references a voice speaks with.
func (s *Service) VoiceReferences(v voice.Voice) ([]api.Reference, error) {
	return s.voices.VoiceReferences(v)
}

// VoiceRecording returns the recording of a voice's reference.
func (s *Service) VoiceRecording(name string) (voices.VoiceRecording, error) {
	return s.voices.VoiceRecording(name)
}

// SpeakCast starts a take like Speak, in the cast voices: each must have a
// recording in the voice library. The take keeps the cast (Take.Voices) and
// the references (in its request), so re-running it keeps the voices.
func (s *Service) SpeakCast(c voices.CastRequest) (takes.Take, error) {
	if len(c.Cast) == 0 {
		return s.Speak(c.Request)
	}
	req, err := s.voices.Cast(c)
	if err != nil {
		return takes.Take{}, err
	}
	return s.takes.StartTake(req, "", c.Cast)
}

// SpeakLines starts a take of each of several lines together, each in its
// cast voices as SpeakCast's (Speak all on an engine that runs several
// takes at once: the engine makes them in one batch). At most
// api.MaxBatch lines; errors as Speak's, naming the line at fault.
func (s *Service) SpeakLines(lines []voices.CastRequest) ([]takes.Take, error) {
	if len(lines) == 0 || len(lines) > api.MaxBatch {
		return nil, fmt.Errorf("%w: %d lines: Speak all starts 1 to %d together", studio.ErrInvalid, len(lines), api.MaxBatch)
	}
	reqs := make([]takes.LineRequest, len(lines))
	for i, c := range lines {
		req := c.Request
		if len(c.Cast) > 0 {
			var err error
			if req, err = s.voices.Cast(c); err != nil {
				return nil, fmt.Errorf("%w: take %d of %d: %s", studio.ErrInvalid, i+1, len(lines), studio.Detail(err))
			}
		}
		reqs[i] = takes.LineRequest{Request: req, Voices: c.Cast}
	}
	return s.takes.StartLines(reqs)
}

// ---- projects and the scene ----

// ProjectRename names a project and the name it is to have (RenameProject,
// or the copy's name for DuplicateProject).
type ProjectRename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// SceneExportRequest writes a project's scene to Path (the window's save
// dialog chose it; an existing file is replaced only with Overwrite); its
// lines' files, when the project asks for them, go beside it.
type SceneExportRequest struct {
	Project   string `json:"project"`
	Path      string `json:"path"`
	Overwrite bool   `json:"overwrite"`
}

// SceneExportResult is what was written and what the scene and its line
// files measure; Note names the line files kept quieter than the scene.
type SceneExportResult struct {
	Files     []string         `json:"files"`
	Plan      loudness.Plan    `json:"plan"`
	Seconds   float64          `json:"duration_s"`
	LineFiles []scene.LineFile `json:"line_files,omitempty"`
	Note      string           `json:"note,omitempty"`
}

// errNoProjects: the service was made without a projects directory.
var errNoProjects = errors.New("this studio keeps no projects (it has no projects directory)")

func (s *Service) projectStore() (*projects.Store, error) {
	if s.projects == nil {
		return nil, errNoProjects
	}
	return s.projects, nil
}

// Projects lists the projects, the most recently saved first; one that
// cannot be read says why.
func (s *Service) Projects() ([]projects.Summary, error) {
	st, err := s.projectStore()
	if err != nil {
		return nil, err
	}
	return st.List()
}

// CurrentProject is the project opened or saved last ("" for none).
func (s *Service) CurrentProject() string {
	if s.projects == nil {
		return ""
	}
	return s.projects.Current()
}

// OpenProject reads a project. One whose file cannot be read is kept aside
// (renamed, never overwritten) and the error says where.
func (s *Service) OpenProject(name string) (projects.Project, error) {
	st, err := s.projectStore()
	if err != nil {
		return projects.Project{}, err
	}
	p, err := st.Open(name)
	if err == nil {
		s.primeCast(p.Cast)
	}
	return p, err
}

// CreateProject makes a new project called name from the studio's script
// and sampling settings; a name that is taken is refused.
func (s *Service) CreateProject(name string) (projects.Project, error) {
	st, err := s.projectStore()
	if err != nil {
		return projects.Project{}, err
	}
	set := s.Settings()
	p := projects.New(name, set.Sampling, set.Seed, set.MaxFrames)
	p.Script = set.Script
	return st.Create(p)
}

// SaveProject writes a project (the UI saves a moment after each change).
// A file it would replace that cannot be read is kept aside first
// (projects.Saved.KeptAside).
func (s *Service) SaveProject(p projects.Project) (projects.Saved, error) {
	st, err := s.projectStore()
	if err != nil {
		return projects.Saved{}, err
	}
	saved, err := st.Save(p)
	if err == nil {
		s.primeCast(p.Cast) // a cast saved unchanged primes nothing
	}
	return saved, err
}

// RenameProject renames a project; the new name must be free.
func (s *Service) RenameProject(r ProjectRename) (projects.Project, error) {
	st, err := s.projectStore()
	if err != nil {
		return projects.Project{}, err
	}
	return st.Rename(r.From, r.To)
}

// DuplicateProject copies a project under a new, free name; the copy
// lists the same takes.
func (s *Service) DuplicateProject(r ProjectRename) (projects.Project, error) {
	st, err := s.projectStore()
	if err != nil {
		return projects.Project{}, err
	}
	return st.Duplicate(r.From, r.To)
}

// TrashedProject says where a deleted project went.
type TrashedProject struct {
	Name string `json:"name"`
	// Path is its folder in the desktop's trash, from where a file manager
	// restores it.
	Path string `json:"path"`
}

// TrashProject deletes a project by moving it into the desktop's trash
// (projects.Store.Trash). Its takes stay in the takes folder, no longer
// kept by its stars. One that cannot be moved is refused and stays.
func (s *Service) TrashProject(name string) (TrashedProject, error) {
	st, err := s.projectStore()
	if err != nil {
		return TrashedProject{}, err
	}
	path, err := st.Trash(name, s.trashDir)
	if err != nil {
		return TrashedProject{}, err
	}
	s.events.Notice(studio.NoticeInfo, fmt.Sprintf("moved the project %s to the trash (%s): a file manager restores it from there", name, path))
	return TrashedProject{Name: name, Path: path}, nil
}

// chosenTakes are the takes the projects use (never removed to make room).
func (s *Service) chosenTakes() map[int]bool {
	if s.projects == nil {
		return nil
	}
	return s.projects.Chosen()
}

// CheckLineFileName says why name cannot name a line's own file in a
// scene exported with one file per line (projects.CheckLineFileName), or
// nil; the lines panel asks before it keeps a name.
func (s *Service) CheckLineFileName(name string) error {
	return projects.CheckLineFileName(name)
}

// sceneOf assembles a project's scene (scene.FromProject) as saved.
func (s *Service) sceneOf(name string) (scene.Result, projects.Project, error) {
	p, err := s.OpenProject(name)
	if err != nil {
		return scene.Result{}, p, err
	}
	res, err := scene.FromProject(p, s.takes)
	return res, p, err
}

// ExportScene writes a project's scene (and its lines' files beside it,
// when the project asks for them), each atomically; nothing is replaced
// without Overwrite.
func (s *Service) ExportScene(r SceneExportRequest) (SceneExportResult, error) {
	res, p, err := s.sceneOf(r.Project)
	if err != nil {
		return SceneExportResult{}, err
	}
	files, err := scene.Write(res, p.Name, r.Path, r.Overwrite)
	if err != nil {
		return SceneExportResult{Files: files}, err
	}
	note := res.LoweredNote()
	msg := fmt.Sprintf("exported the scene of %s to %s (%.1f LUFS, true peak %.1f dBTP)", p.Name, r.Path, res.Plan.Result, res.Plan.ResultTP)
	if note != "" {
		msg += "; " + note
	}
	s.events.Notice(studio.NoticeInfo, msg)
	return SceneExportResult{Files: files, Plan: res.Plan, Seconds: res.Seconds, LineFiles: res.LineFiles, Note: note}, nil
}

// ---- the speech server panel ----

// ServerStatus reports the speech server panel.
func (s *Service) ServerStatus() server.ServerStatus { return s.server.Status() }

// StartServer starts the speech API (POST /v1/audio/speech, GET
// /v1/models, GET /healthz) on 127.0.0.1 at the settings' server port,
// sharing the studio's model; its takes appear in the takes list. Only the
// desktop window starts one: under `proscenium serve` the server is already
// this process.
func (s *Service) StartServer() (server.ServerStatus, error) {
	mux := http.NewServeMux()
	SpeechAPI(s, server.SpeechModelID, speechapi.DefaultLimits()).Register(mux)
	return s.server.Start(mux)
}

// StopServer stops the studio's speech server (requests in flight are
// ended) and waits until it has stopped.
func (s *Service) StopServer() (server.ServerStatus, error) { return s.server.Stop() }
