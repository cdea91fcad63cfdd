// Package hfcache finds Drama 3 checkpoints in the Hugging Face hub cache
// without the network: the snapshots of fishaudio/drama-3 and of any other
// repository whose config.json is a Drama 3 checkpoint, which of them the
// repository's refs/main names, and whether each holds every file a load
// needs. It resolves a model name such as "fishaudio/drama-3" to a snapshot
// directory for the command line and the studio.
package hfcache

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/adrg/xdg"

	"proscenium/engine/drama3"
	"proscenium/internal/regular"
)

// Repo is the Hugging Face id of Drama 3.
const Repo = "fishaudio/drama-3"

// Snapshot is one snapshot directory of a repository in the cache.
type Snapshot struct {
	Repo     string    // owner/name
	Revision string    // the commit, the snapshot directory's name
	Dir      string    // hub/models--owner--name/snapshots/REVISION
	Main     bool      // refs/main names this revision
	Missing  []string  // files a load needs that the snapshot lacks (shards of the index, tokenizer.json, codec.pth)
	Modified time.Time // of its config.json
}

// Complete reports whether the snapshot holds every file a load needs.
func (s Snapshot) Complete() bool { return len(s.Missing) == 0 }

// HubDirs lists where the hub cache may be, as the huggingface_hub library
// looks: $HF_HUB_CACHE, $HF_HOME/hub, then $XDG_CACHE_HOME/huggingface/hub
// and ~/.cache/huggingface/hub, each once. A leading ~ in the variables is the home
// directory (a shell leaves it unexpanded inside quotes).
func HubDirs() []string {
	var dirs []string
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		dirs = append(dirs, expandHome(d))
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		dirs = append(dirs, filepath.Join(expandHome(d), "hub"))
	}
	dirs = append(dirs, filepath.Join(xdg.CacheHome, "huggingface", "hub"))
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".cache", "huggingface", "hub"))
	}
	// Each once (the XDG cache is ~/.cache unless set): the list is shown
	// to the user when nothing is found.
	var once []string
	for _, d := range dirs {
		if d = filepath.Clean(d); !slices.Contains(once, d) {
			once = append(once, d)
		}
	}
	return once
}

func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~"))
}

// Find lists the Drama 3 snapshots in hubDirs: fishaudio/drama-3's (any
// with a config.json), then other repositories' whose config.json parses as
// a Drama 3 config. Each
// repository's complete snapshots come first, the one refs/main names
// before the others, then newest first; incomplete ones last.
func Find(hubDirs []string) []Snapshot {
	var out []Snapshot
	seen := map[string]bool{}
	for _, hub := range hubDirs {
		repos, err := os.ReadDir(hub)
		if err != nil {
			continue
		}
		for _, r := range repos {
			repo, ok := repoName(r.Name())
			if !ok {
				continue
			}
			repoDir := filepath.Join(hub, r.Name())
			if abs, err := filepath.Abs(repoDir); err == nil {
				if seen[abs] {
					continue
				}
				seen[abs] = true
			}
			out = append(out, repoSnapshots(repo, repoDir)...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Repo == Repo) != (b.Repo == Repo) {
			return a.Repo == Repo
		}
		if a.Repo != b.Repo {
			return a.Repo < b.Repo
		}
		if a.Complete() != b.Complete() {
			return a.Complete()
		}
		if a.Main != b.Main {
			return a.Main
		}
		return a.Modified.After(b.Modified)
	})
	return out
}

// repoName turns a cache directory name, models--owner--name, into
// owner/name.
func repoName(dir string) (string, bool) {
	rest, ok := strings.CutPrefix(dir, "models--")
	if !ok {
		return "", false
	}
	owner, name, ok := strings.Cut(rest, "--")
	if !ok || owner == "" || name == "" {
		return "", false
	}
	return owner + "/" + name, true
}

// repoSnapshots lists repoDir's snapshots that hold a Drama 3 config.json.
func repoSnapshots(repo, repoDir string) []Snapshot {
	entries, err := os.ReadDir(filepath.Join(repoDir, "snapshots"))
	if err != nil {
		return nil
	}
	main := readRef(repoDir, "main")
	var out []Snapshot
	for _, e := range entries {
		dir := filepath.Join(repoDir, "snapshots", e.Name())
		fi, err := drama3.StatConfig(dir)
		if err != nil {
			continue
		}
		if _, err := drama3.LoadConfig(dir); err != nil && repo != Repo {
			continue // another model's checkpoint (Drama 3's own is listed: inspect says what is wrong)
		}
		out = append(out, Snapshot{Repo: repo, Revision: e.Name(), Dir: dir, Main: e.Name() == main,
			Missing: missingFiles(dir), Modified: fi.ModTime()})
	}
	return out
}

// readRef is the commit refs/NAME holds ("" when there is none).
func readRef(repoDir, name string) string {
	b, err := regular.ReadFile(filepath.Join(repoDir, "refs", name), maxRefBytes)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// maxRefBytes bounds a refs/ file (a 40-hex commit and a newline).
const maxRefBytes = 4096

// missingFiles is drama3.MissingFiles, sorted.
func missingFiles(dir string) []string {
	missing := drama3.MissingFiles(dir)
	sort.Strings(missing)
	return missing
}

// namePattern is a Hugging Face repository id, owner/name.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ResolveModel turns a --model argument into a checkpoint directory: an
// existing path is itself; a repository id (owner/name) that is no path is
// the snapshot refs/main names in the cache, or else its newest complete
// snapshot. An incomplete snapshot is refused, naming what it lacks.
// Anything else comes back as given (the loader then says what is wrong).
func ResolveModel(arg string, hubDirs []string) (string, error) {
	if _, err := os.Stat(arg); err == nil || !namePattern.MatchString(arg) {
		return arg, nil
	}
	var found []Snapshot
	for _, s := range Find(hubDirs) {
		if s.Repo == arg {
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		return "", fmt.Errorf("%s is neither a directory nor a Drama 3 model in the Hugging Face cache (looked in %s; download it with `huggingface-cli download %s`)",
			arg, strings.Join(hubDirs, ", "), arg)
	}
	for _, s := range found {
		if s.Main {
			if !s.Complete() {
				return "", fmt.Errorf("%s: the snapshot refs/main names (%s) is incomplete: missing %s (finish the download)", arg, s.Dir, strings.Join(s.Missing, ", "))
			}
			return s.Dir, nil
		}
	}
	if s := found[0]; s.Complete() { // sorted: complete and newest first
		return s.Dir, nil
	}
	return "", fmt.Errorf("%s: every snapshot in the cache is incomplete (%s misses %s)", arg, found[0].Dir, strings.Join(found[0].Missing, ", "))
}
