package projects

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/adrg/xdg"

	"proscenium/app/internal/files"
	"proscenium/engine/audio/pcm"
	"proscenium/internal/regular"
)

const (
	projectFile = "project.json"
	currentFile = ".current" // the name of the project open last
)

// DefaultDir is $XDG_DATA_HOME/proscenium/projects.
func DefaultDir() string { return filepath.Join(xdg.DataHome, "proscenium", "projects") }

// Store is the projects directory. Its methods are safe for concurrent use.
type Store struct {
	dir string
	mu  sync.Mutex
	now func() time.Time
}

// NewStore keeps projects under dir (created when the first is saved).
func NewStore(dir string) *Store { return &Store{dir: dir, now: time.Now} }

// Dir is where the projects live.
func (s *Store) Dir() string { return s.dir }

// Summary is one project of the list.
type Summary struct {
	Name    string `json:"name"`
	SavedMs int64  `json:"saved_ms"`
	Lines   int    `json:"lines"`
	Takes   int    `json:"takes"`
	// Problem says why the project cannot be opened ("" when it can).
	Problem string `json:"problem,omitempty"`
}

// CorruptError says a project.json could not be read and where it was kept.
type CorruptError struct {
	Name    string
	KeptAs  string // the path the unreadable file was renamed to
	Problem error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("project %q could not be read (%v); the file is kept as %s and nothing was overwritten", e.Name, e.Problem, e.KeptAs)
}

func (e *CorruptError) Unwrap() error { return e.Problem }

func (s *Store) path(name string) string { return filepath.Join(s.dir, name, projectFile) }

// List returns every project, the most recently saved first.
func (s *Store) List() ([]Summary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Summary{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("projects: %w", err)
	}
	out := []Summary{}
	for _, e := range entries {
		if !e.IsDir() || CheckName(e.Name()) != nil {
			continue
		}
		data, err := readLimited(s.path(e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // a directory with no project (its file was kept aside)
		}
		sum := Summary{Name: e.Name()}
		var p Project
		if err == nil {
			p, err = Parse(data)
		}
		if err != nil {
			sum.Problem = err.Error()
		} else {
			sum.SavedMs, sum.Lines, sum.Takes = p.SavedMs, len(p.Lines), len(p.Takes)
		}
		out = append(out, sum)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].SavedMs > out[j].SavedMs })
	return out, nil
}

// readLimited reads a regular file of at most maxFileBytes (a FIFO is
// refused before it is opened: opening it would wait for a writer).
func readLimited(path string) ([]byte, error) {
	data, err := files.ReadCapped(path, maxFileBytes)
	if errors.Is(err, regular.ErrNotRegular) || errors.Is(err, regular.ErrTooLarge) {
		return nil, invalid("%v", err)
	}
	return data, err
}

// Open reads the project called name. A project.json that cannot be read
// back is renamed aside and reported (*CorruptError); the project then
// opens as new the next time it is saved.
func (s *Store) Open(name string) (Project, error) {
	if err := CheckName(name); err != nil {
		return Project{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.readLocked(name)
	if err != nil {
		return Project{}, err
	}
	s.setCurrentLocked(name)
	return p, nil
}

// Read reads the project called name and changes nothing: it does not
// become the current project, and a project.json that cannot be read is
// reported, not kept aside (the studio does that when it opens it). A
// command that reads what a running studio saved uses it.
func (s *Store) Read(name string) (Project, error) {
	if err := CheckName(name); err != nil {
		return Project{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.read(name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Project{}, fmt.Errorf("project %q: %w", name, err)
	}
	return p, err
}

// read reads name's project.json as it is.
func (s *Store) read(name string) (Project, error) {
	data, err := readLimited(s.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return Project{}, notFound(name)
	}
	if err != nil {
		return Project{}, err
	}
	p, err := Parse(data)
	if err != nil {
		return Project{}, err
	}
	p.Name = name // renamed by hand: the directory's name is the project's
	return p, nil
}

// readLocked reads name's project; an unreadable one is kept aside.
func (s *Store) readLocked(name string) (Project, error) {
	p, err := s.read(name)
	if err == nil || errors.Is(err, ErrNotFound) {
		return p, err
	}
	if !errors.Is(err, ErrInvalid) {
		return Project{}, fmt.Errorf("project %q: %w", name, err)
	}
	kept, moveErr := s.keepAsideLocked(name)
	if moveErr != nil {
		return Project{}, fmt.Errorf("project %q could not be read (%v) nor kept aside (%v); nothing was changed", name, err, moveErr)
	}
	return Project{}, &CorruptError{Name: name, KeptAs: kept, Problem: err}
}

// keepAsideLocked renames name's project.json to a name no file has.
func (s *Store) keepAsideLocked(name string) (string, error) {
	from := s.path(name)
	stamp := s.now().UTC().Format("20060102T150405")
	for i := 0; i < 100; i++ {
		to := from + ".corrupt-" + stamp
		if i > 0 {
			to += fmt.Sprintf("-%d", i)
		}
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			return to, os.Rename(from, to)
		}
	}
	return "", fmt.Errorf("too many kept copies beside %s", from)
}

// Save writes p (atomically) and returns it as saved. A project.json that
// is there but cannot be read is kept aside first (Saved.KeptAside says
// where), never overwritten.
func (s *Store) Save(p Project) (Saved, error) {
	if p.Format == 0 {
		p.Format = FormatVersion
	}
	if err := p.Check(); err != nil {
		return Saved{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Saved{}
	if data, err := readLimited(s.path(p.Name)); err == nil {
		if _, perr := Parse(data); perr != nil {
			kept, err := s.keepAsideLocked(p.Name)
			if err != nil {
				return Saved{}, fmt.Errorf("project %q: the file there cannot be read (%v) nor kept aside (%v): not saved", p.Name, perr, err)
			}
			out.KeptAside = kept
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Saved{}, fmt.Errorf("project %q: %w", p.Name, err)
	}
	p.SavedMs = s.now().UnixMilli()
	if err := s.writeLocked(p); err != nil {
		return Saved{}, err
	}
	s.setCurrentLocked(p.Name)
	out.Project = p
	return out, nil
}

// Saved is what Save wrote, and where an unreadable file it found was kept.
type Saved struct {
	Project   Project `json:"project"`
	KeptAside string  `json:"kept_aside,omitempty"`
}

func (s *Store) writeLocked(p Project) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(s.dir, p.Name), 0o755); err != nil {
		return fmt.Errorf("project %q: %w", p.Name, err)
	}
	return pcm.WriteFileAtomic(s.path(p.Name), append(data, '\n'))
}

// Create saves a new empty-scripted p, refusing a name that is taken.
func (s *Store) Create(p Project) (Project, error) {
	if err := CheckName(p.Name); err != nil {
		return Project{}, err
	}
	if s.exists(p.Name) {
		return Project{}, taken(p.Name)
	}
	saved, err := s.Save(p)
	return saved.Project, err
}

func (s *Store) exists(name string) bool {
	_, err := os.Lstat(filepath.Join(s.dir, name))
	return err == nil
}

// Rename moves the project from to the name to (which must be free).
// Renaming a project to its own name changes nothing.
func (s *Store) Rename(from, to string) (Project, error) { return s.saveAs(from, to, true) }

// Duplicate copies the project from under the new name to. The copy lists
// the same takes (the audio is shared, not copied).
func (s *Store) Duplicate(from, to string) (Project, error) { return s.saveAs(from, to, false) }

// saveAs writes the project from under the free name to, which is then the
// current project. With move, from's directory becomes to's (Rename);
// without, from stays as it was (Duplicate).
func (s *Store) saveAs(from, to string, move bool) (Project, error) {
	for _, n := range []string{from, to} {
		if err := CheckName(n); err != nil {
			return Project{}, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.readLocked(from)
	if err != nil {
		return Project{}, err
	}
	if move && from == to {
		return p, nil
	}
	if _, err := os.Lstat(filepath.Join(s.dir, to)); !errors.Is(err, fs.ErrNotExist) {
		return Project{}, taken(to)
	}
	if move {
		if err := os.Rename(filepath.Join(s.dir, from), filepath.Join(s.dir, to)); err != nil {
			return Project{}, fmt.Errorf("rename project %q: %w", from, err)
		}
	}
	p.Name = to
	p.SavedMs = s.now().UnixMilli()
	if err := s.writeLocked(p); err != nil {
		return Project{}, err
	}
	s.setCurrentLocked(to)
	return p, nil
}

// Current is the name of the project opened or saved last ("" for none).
func (s *Store) Current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := os.ReadFile(filepath.Join(s.dir, currentFile))
	if err != nil {
		return ""
	}
	name := strings.TrimSpace(string(data))
	if CheckName(name) != nil {
		return ""
	}
	return name
}

// setCurrentLocked remembers name as the project to open next time; not
// remembering is not worth failing a save for.
func (s *Store) setCurrentLocked(name string) {
	_ = pcm.WriteFileAtomic(filepath.Join(s.dir, currentFile), []byte(name+"\n"))
}

// Chosen is every take a project has chosen for a line (the takes a scene
// uses: never removed by themselves). Projects that cannot be read add
// nothing.
func (s *Store) Chosen() map[int]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]bool{}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if !e.IsDir() || CheckName(e.Name()) != nil {
			continue
		}
		data, err := readLimited(s.path(e.Name()))
		if err != nil {
			continue
		}
		if p, err := Parse(data); err == nil {
			for _, l := range p.Lines {
				if l.Chosen != 0 {
					out[l.Chosen] = true
				}
			}
		}
	}
	return out
}
