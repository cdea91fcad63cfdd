package server

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Over HTTP, the methods that read a folder the caller names answer only
// for folders under the roots the studio knows (Options.ModelRoots: the
// settings' model folder, the Hugging Face cache, the data folder): a page
// or client of the server must not learn which paths exist elsewhere and
// their sizes. The desktop window calls the service directly and is not
// limited.

// modelPathMethods take a model folder as their first argument.
var modelPathMethods = map[string]bool{"InspectModel": true}

// checkModelPath refuses dir unless it is under one of roots, symbolic links
// resolved (a link under a root that points elsewhere is elsewhere). A
// path that does not exist is judged as written.
func checkModelPath(method, dir string, roots []string) error {
	if dir == "" {
		return nil // the method says the path is empty
	}
	for _, root := range roots {
		if root != "" && within(resolve(dir), resolve(root)) {
			return nil
		}
	}
	return fmt.Errorf("over HTTP, %s answers only for folders under the settings' model folder, the Hugging Face cache or the data folder (%s); open other folders in the desktop window",
		method, strings.Join(nonEmpty(roots), ", "))
}

// resolve is path made absolute, cleaned and with its links resolved when
// it exists.
func resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// within reports whether path is root or under it.
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
