package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"proscenium/app/projects"
	"proscenium/app/scene"
	"proscenium/engine/audio/loudness"
)

// This file is the Service's face of the projects (app/projects) and of
// scene export (app/scene): the UI's script, lines, cast and chosen takes
// saved on disk, and the chosen takes of all lines exported as one file.

// ProjectRename names a project and the name it is to have (rename, or
// the copy's name for DuplicateProject).
type ProjectRename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// SceneExportRequest writes project's scene to Path (the window's save
// dialog chose it; an existing file is replaced only with Overwrite). The
// files of the lines, when the project asks for them, go beside it.
type SceneExportRequest struct {
	Project   string `json:"project"`
	Path      string `json:"path"`
	Overwrite bool   `json:"overwrite"`
}

// SceneExportResult is what was written and what the scene measures.
type SceneExportResult struct {
	Files   []string      `json:"files"`
	Plan    loudness.Plan `json:"plan"`
	Seconds float64       `json:"seconds"`
}

// kindError keeps a package's own message and gives errors.Is the app's
// kind (ErrInvalid, ErrNotFound, ErrExists: the HTTP status follows it).
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string        { return e.err.Error() }
func (e *kindError) Unwrap() error        { return e.err }
func (e *kindError) Is(target error) bool { return target == e.kind }

// projectError gives the projects package's errors the app's kinds.
func projectError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, projects.ErrInvalid): // a corrupt file too (kept aside)
		return &kindError{ErrInvalid, err}
	case errors.Is(err, projects.ErrNotFound):
		return &kindError{ErrNotFound, err}
	case errors.Is(err, projects.ErrExists):
		return &kindError{ErrExists, err}
	}
	return err
}

// errNoProjects: this service was made without a projects directory.
var errNoProjects = errors.New("projects are not kept by this studio (it has no projects directory)")

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
	return p, projectError(err)
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
	p, err = st.Create(p)
	return p, projectError(err)
}

// SaveProject writes a project (the UI saves a moment after each change).
// Every take it lists must exist; a file it would replace that cannot be
// read is kept aside first (Saved.KeptAside).
func (s *Service) SaveProject(p projects.Project) (projects.Saved, error) {
	st, err := s.projectStore()
	if err != nil {
		return projects.Saved{}, err
	}
	saved, err := st.Save(p)
	return saved, projectError(err)
}

// RenameProject renames a project; the new name must be free.
func (s *Service) RenameProject(r ProjectRename) (projects.Project, error) {
	st, err := s.projectStore()
	if err != nil {
		return projects.Project{}, err
	}
	p, err := st.Rename(r.From, r.To)
	return p, projectError(err)
}

// DuplicateProject copies a project under a new, free name; the copy lists
// the same takes.
func (s *Service) DuplicateProject(r ProjectRename) (projects.Project, error) {
	st, err := s.projectStore()
	if err != nil {
		return projects.Project{}, err
	}
	p, err := st.Duplicate(r.From, r.To)
	return p, projectError(err)
}

// sceneOf assembles a project's scene from its lines' chosen takes, as
// its export settings say.
func (s *Service) sceneOf(name string) (scene.Result, error) {
	p, err := s.OpenProject(name)
	if err != nil {
		return scene.Result{}, err
	}
	var lines []scene.Line
	var missing []string
	for i, l := range p.Lines {
		if l.Chosen == 0 {
			missing = append(missing, fmt.Sprint(i+1))
			continue
		}
		pcm, t, err := s.takePCM(l.Chosen)
		if err != nil {
			return scene.Result{}, fmt.Errorf("line %d: %w", i+1, err)
		}
		if t.State == TakeRunning {
			return scene.Result{}, fmt.Errorf("%w: line %d: take #%d is still running", ErrBusy, i+1, t.ID)
		}
		lines = append(lines, scene.Line{Take: t.ID, PCM: pcm, Rate: t.SampleRate})
	}
	if len(missing) > 0 {
		return scene.Result{}, &kindError{ErrInvalid, fmt.Errorf("line %s has no chosen take: star one of its takes first", strings.Join(missing, ", "))}
	}
	res, err := scene.Assemble(p.Name, lines, p.Export)
	if err != nil {
		return scene.Result{}, &kindError{ErrInvalid, err}
	}
	return res, nil
}

// ChooseScenePath asks where to export a project's scene in the native
// save dialog (the XDG music directory, the project's name); "" when
// cancelled.
func (s *Service) ChooseScenePath(project string) (string, error) {
	if s.dialogs == nil {
		return "", ErrNoDialog
	}
	p, err := s.OpenProject(project)
	if err != nil {
		return "", err
	}
	return s.dialogs.ChooseSaveFile(fmt.Sprintf("Export the scene of %s as %s", p.Name, strings.ToUpper(p.Export.Format)), DefaultExportDir(), p.Name+"."+p.Export.Format)
}

// ExportScene writes a project's scene (and its lines' files beside it,
// when the project asks for them), each atomically. No file is replaced
// without Overwrite; a failure leaves nothing half-written.
func (s *Service) ExportScene(r SceneExportRequest) (SceneExportResult, error) {
	if r.Path == "" || !filepath.IsAbs(r.Path) || strings.ContainsRune(r.Path, 0) {
		return SceneExportResult{}, fmt.Errorf("%w: the scene's path must be an absolute file path, got %q", ErrInvalid, r.Path)
	}
	dir := filepath.Dir(r.Path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return SceneExportResult{}, fmt.Errorf("%w: the folder %s does not exist", ErrInvalid, dir)
	}
	res, err := s.sceneOf(r.Project)
	if err != nil {
		return SceneExportResult{}, err
	}
	// The scene at the path chosen; the lines beside it, named after it.
	base := strings.TrimSuffix(filepath.Base(r.Path), filepath.Ext(r.Path))
	paths := []string{r.Path}
	for _, f := range res.Files[1:] {
		paths = append(paths, filepath.Join(dir, base+strings.TrimPrefix(f.Name, r.Project)))
	}
	if !r.Overwrite {
		for _, p := range paths {
			if _, err := os.Lstat(p); err == nil {
				return SceneExportResult{}, fmt.Errorf("%w: %s already exists; nothing was written (choose another name, or confirm replacing it)", ErrExists, p)
			}
		}
	}
	out := SceneExportResult{Plan: res.Plan, Seconds: res.Seconds}
	for i, f := range res.Files {
		if err := writeExport(paths[i], f.Data); err != nil {
			return out, explainWriteError(paths[i], err)
		}
		out.Files = append(out.Files, paths[i])
	}
	s.notice(NoticeInfo, fmt.Sprintf("exported the scene of %s to %s (%.1f LUFS, true peak %.1f dBTP)", r.Project, r.Path, res.Plan.Result, res.Plan.ResultTP))
	return out, nil
}
