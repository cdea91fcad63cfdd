package app

import (
	"fmt"
	"strings"

	"proscenium/app/projects"
	"proscenium/app/script"
	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/engine/audio/pcm"
)

// ScreenplayRequest is a screenplay to read (app/script): its text, and
// whether its action is narrated.
type ScreenplayRequest struct {
	Text    string `json:"text"`
	Narrate bool   `json:"narrate"`
}

// ScreenplayPreview is a screenplay as a script, before it becomes a
// project: Cast suggests each character's voice, the cloned voice of the
// same name where there is one ("" the model's own).
type ScreenplayPreview struct {
	Screenplay script.Screenplay `json:"screenplay"`
	Cast       []string          `json:"cast"`
}

// ScreenplayProject makes a project of a screenplay: its name, the
// screenplay, and the voice of each character (Cast, as
// ScreenplayPreview's; shorter: the rest in the model's voice).
type ScreenplayProject struct {
	Name string `json:"name"`
	ScreenplayRequest
	Cast []string `json:"cast"`
}

// ParseScreenplay reads a screenplay as the studio's script, changing
// nothing: the import's preview.
func (s *Service) ParseScreenplay(r ScreenplayRequest) (ScreenplayPreview, error) {
	sp, err := readScreenplay(r)
	if err != nil {
		return ScreenplayPreview{}, err
	}
	cloned := map[string]string{} // a cloned voice's name, folded → as written
	for _, v := range s.Voices() {
		if v.Reference != "" {
			cloned[strings.ToLower(v.Name)] = v.Name
		}
	}
	cast := make([]string, len(sp.Characters))
	for i, c := range sp.Characters {
		cast[i] = cloned[strings.ToLower(c.Name)]
	}
	return ScreenplayPreview{Screenplay: sp, Cast: trimCast(cast)}, nil
}

// readScreenplay reads r as a script the studio holds (at most
// settings.MaxScriptBytes), refusing it as studio.ErrInvalid.
func readScreenplay(r ScreenplayRequest) (script.Screenplay, error) {
	sp, err := script.ParseScreenplay(r.Text, script.ScreenplayOptions{Narrate: r.Narrate})
	if err != nil {
		return sp, fmt.Errorf("%w: %v", studio.ErrInvalid, err)
	}
	if len(sp.Script) > settings.MaxScriptBytes {
		return sp, fmt.Errorf("%w: the screenplay makes a script of %d KiB and the studio's limit is %d KiB: import it in parts (a scene or an act at a time)", studio.ErrInvalid, (len(sp.Script)+1023)>>10, settings.MaxScriptBytes>>10)
	}
	return sp, nil
}

// CreateProjectFromScreenplay makes a new project called r.Name of a
// screenplay: its script, its characters named, cast in r.Cast, with the
// studio's sampling settings. A name that is taken, a cast longer than the
// characters and a screenplay ParseScreenplay refuses are refused, and
// nothing is made.
func (s *Service) CreateProjectFromScreenplay(r ScreenplayProject) (projects.Project, error) {
	st, err := s.projectStore()
	if err != nil {
		return projects.Project{}, err
	}
	sp, err := readScreenplay(r.ScreenplayRequest)
	if err != nil {
		return projects.Project{}, err
	}
	if len(r.Cast) > len(sp.Characters) {
		return projects.Project{}, fmt.Errorf("%w: %d voices cast for the screenplay's %d characters", studio.ErrInvalid, len(r.Cast), len(sp.Characters))
	}
	set := s.Settings()
	p := projects.New(r.Name, set.Sampling, set.Seed, set.MaxFrames)
	p.Script = sp.Script
	p.Cast = trimCast(append([]string(nil), r.Cast...))
	for _, c := range sp.Characters {
		p.Characters = append(p.Characters, c.Name)
	}
	// Its lines as the studio splits them (frontend/src/lib/lines.ts): a
	// speech a line, each after its speaker tag.
	for _, l := range script.Lines(p.Script) {
		p.Lines = append(p.Lines, projects.Line{Text: l.Text, Speaker: l.Speaker, Takes: []int{}})
	}
	p, err = st.Create(p)
	if err == nil {
		s.primeCast(p.Cast)
	}
	return p, err
}

// trimCast drops a cast's trailing model voices ("" at its end), as the
// cast chips keep it.
func trimCast(cast []string) []string {
	for len(cast) > 0 && cast[len(cast)-1] == "" {
		cast = cast[:len(cast)-1]
	}
	return cast
}

// ScreenplayFile is a project's script as a Fountain screenplay
// (script.FormatFountain): the file's name and its text.
type ScreenplayFile struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// ProjectScreenplay writes a project's script, as saved, as a Fountain
// screenplay for a screenwriting program (or Import screenplay) to read:
// its characters' cues, a line's leading direction its parenthetical, the
// Narrator's lines as action. A project without lines is refused. It only
// reads the project (projects.Store.Read): writing it out neither makes it
// the current project nor primes its cast.
func (s *Service) ProjectScreenplay(project string) (ScreenplayFile, error) {
	st, err := s.projectStore()
	if err != nil {
		return ScreenplayFile{}, err
	}
	p, err := st.Read(project)
	if err != nil {
		return ScreenplayFile{}, err
	}
	if len(p.Lines) == 0 {
		return ScreenplayFile{}, fmt.Errorf("%w: the project %s has no lines to write: write its script first", studio.ErrInvalid, p.Name)
	}
	lines := make([]script.Line, len(p.Lines))
	for i, l := range p.Lines {
		lines[i] = script.Line{Speaker: l.Speaker, Text: l.Text}
	}
	return ScreenplayFile{Name: p.Name + ".fountain", Text: script.FormatFountain(p.Name, lines, p.Characters)}, nil
}

// ScreenplayExport writes a project's screenplay (ProjectScreenplay) to
// Path, an absolute file path the window's save dialog chose.
type ScreenplayExport struct {
	Project string `json:"project"`
	Path    string `json:"path"`
}

// ExportScreenplay writes a project's screenplay to r.Path (atomically:
// a failed write leaves nothing behind) and returns the path.
func (s *Service) ExportScreenplay(r ScreenplayExport) (string, error) {
	if err := checkFilePath("the screenplay's path", r.Path); err != nil {
		return "", err
	}
	f, err := s.ProjectScreenplay(r.Project)
	if err != nil {
		return "", err
	}
	if err := pcm.WriteFileAtomic(r.Path, []byte(f.Text)); err != nil {
		return "", takes.ExplainWriteError(r.Path, err)
	}
	s.events.Notice(studio.NoticeInfo, fmt.Sprintf("wrote the script of %s as a Fountain screenplay to %s", r.Project, r.Path))
	return r.Path, nil
}
