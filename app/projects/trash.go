package projects

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	"github.com/adrg/xdg"
)

// A project is deleted by moving it into the desktop's trash, from where
// the file manager puts it back: the home trash of the freedesktop.org
// Trash specification 1.0 ($XDG_DATA_HOME/Trash), which GNOME's, KDE's
// and other file managers share. The project's folder goes to
// Trash/files/<name> and Trash/info/<name>.trashinfo says where it was and
// when it went.

// DefaultTrashDir is the home trash, $XDG_DATA_HOME/Trash.
func DefaultTrashDir() string { return filepath.Join(xdg.DataHome, "Trash") }

// Trash moves project name into the trash at trashDir and returns where
// its folder now is. The trash's own name for it is the project's, or
// "<name>.2", "<name>.3", … when the trash holds one of that name already
// (reserved by creating its info file first, as the specification asks).
// A project that is not there, or that cannot be moved (the trash on
// another file system), is refused, and nothing changes.
func (s *Store) Trash(name, trashDir string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := filepath.Join(s.dir, name)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", notFound(name)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	filesDir, infoDir := filepath.Join(trashDir, "files"), filepath.Join(trashDir, "info")
	for _, d := range []string{filesDir, infoDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("the trash (%s) cannot be made: %w; the project %q is where it was", trashDir, err, name)
		}
	}
	info := fmt.Sprintf("[Trash Info]\nPath=%s\nDeletionDate=%s\n", (&url.URL{Path: abs}).EscapedPath(), s.now().Format("2006-01-02T15:04:05"))
	for i := 1; i <= 1000; i++ {
		as := name
		if i > 1 {
			as = name + "." + strconv.Itoa(i)
		}
		to, infoPath := filepath.Join(filesDir, as), filepath.Join(infoDir, as+".trashinfo")
		if _, err := os.Lstat(to); err == nil {
			continue // taken, with or without its info
		}
		f, err := os.OpenFile(infoPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("the trash (%s) cannot be written: %w; the project %q is where it was", trashDir, err, name)
		}
		_, werr := f.WriteString(info)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Rename(dir, to)
		}
		if werr != nil {
			os.Remove(infoPath)
			return "", fmt.Errorf("the project %q cannot be moved to the trash (%s): %w; it is where it was", name, trashDir, werr)
		}
		if current, _ := os.ReadFile(filepath.Join(s.dir, currentFile)); string(current) == name+"\n" {
			os.Remove(filepath.Join(s.dir, currentFile))
		}
		return to, nil
	}
	return "", fmt.Errorf("the trash (%s) holds a thousand projects called %q: empty it first; the project is where it was", trashDir, name)
}
