package app

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/adrg/xdg"

	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/engine/hfcache"
)

// Dialogs are the native file dialogs of the desktop window (Wails
// runtime). A path the user cancels comes back as "".
type Dialogs interface {
	ChooseDirectory(title, defaultDir string) (string, error)
	ChooseSaveFile(title, defaultDir, defaultName string) (string, error)
}

// ChooseModelDir asks for a checkpoint directory in the native dialog; ""
// when cancelled. The browser has none (ErrNoDialog): the path is typed.
func (s *Service) ChooseModelDir() (string, error) {
	if s.dialogs == nil {
		return "", studio.ErrNoDialog
	}
	start := s.Settings().ModelDir
	if start == "" {
		if snaps := hfcache.Find(hfcache.HubDirs()); len(snaps) > 0 {
			start = snaps[0].Dir
		}
	}
	return s.dialogs.ChooseDirectory("Choose a Drama 3 checkpoint directory", start)
}

// ChooseExportPath asks where to export a take in the native save dialog,
// starting in the XDG music directory with a name made from the take; ""
// when cancelled.
func (s *Service) ChooseExportPath(r takes.ExportRequest) (string, error) {
	if s.dialogs == nil {
		return "", studio.ErrNoDialog
	}
	label, err := takes.ExportLabel(r.Format)
	if err != nil {
		return "", err
	}
	def, err := s.DefaultExportPath(r)
	if err != nil {
		return "", err
	}
	return s.dialogs.ChooseSaveFile(fmt.Sprintf("Export take #%d as %s", r.ID, label), filepath.Dir(def), filepath.Base(def))
}

// ChooseLexiconPath asks where to export the pronunciations in the native
// save dialog (the XDG documents directory, pronunciations.json); "" when
// cancelled.
func (s *Service) ChooseLexiconPath() (string, error) {
	if s.dialogs == nil {
		return "", studio.ErrNoDialog
	}
	return s.dialogs.ChooseSaveFile("Export the pronunciations", xdg.UserDirs.Documents, "pronunciations.json")
}

// ChooseScenePath asks where to export a project's scene in the native
// save dialog (the XDG music directory, the project's name); "" when
// cancelled.
func (s *Service) ChooseScenePath(project string) (string, error) {
	if s.dialogs == nil {
		return "", studio.ErrNoDialog
	}
	p, err := s.OpenProject(project)
	if err != nil {
		return "", err
	}
	return s.dialogs.ChooseSaveFile(fmt.Sprintf("Export the scene of %s as %s", p.Name, strings.ToUpper(p.Export.Format)), takes.DefaultExportDir(), p.Name+"."+p.Export.Format)
}

// ChooseScreenplayPath asks where to write a project's script as a
// Fountain screenplay in the native save dialog (the XDG documents
// directory, the project's name); "" when cancelled.
func (s *Service) ChooseScreenplayPath(project string) (string, error) {
	if s.dialogs == nil {
		return "", studio.ErrNoDialog
	}
	f, err := s.ProjectScreenplay(project)
	if err != nil {
		return "", err
	}
	return s.dialogs.ChooseSaveFile("Export the script of "+project+" as a Fountain screenplay", xdg.UserDirs.Documents, f.Name)
}
