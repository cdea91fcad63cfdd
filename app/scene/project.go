package scene

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"proscenium/app/projects"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/engine/audio/encode"
	"proscenium/engine/audio/pcm"
)

// TakeAudio is where the chosen takes' audio comes from (takes.List).
type TakeAudio interface {
	TakePCM(id int) ([]float32, takes.Take, error)
}

// kindError is a sentence of its own with a studio kind for errors.Is.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

// FromProject assembles p's scene: the chosen take of every line, in
// order, as p's export settings say. A line without a chosen take, or
// whose take is gone or still running, is refused by number.
func FromProject(p projects.Project, from TakeAudio) (Result, error) {
	var lines []Line
	var missing []string
	who := speakersOf(p)
	for i, l := range p.Lines {
		if l.Chosen == 0 {
			missing = append(missing, fmt.Sprint(i+1))
			continue
		}
		pcm, t, err := from.TakePCM(l.Chosen)
		if err != nil {
			return Result{}, fmt.Errorf("line %d: %w", i+1, err)
		}
		if t.State == takes.TakeRunning {
			return Result{}, &kindError{studio.ErrBusy, fmt.Sprintf("line %d: take #%d is still running", i+1, t.ID)}
		}
		lines = append(lines, lineOf(l, t, pcm, who))
	}
	if len(missing) > 0 {
		return Result{}, &kindError{studio.ErrInvalid, fmt.Sprintf("line %s has no chosen take: star one of its takes first", strings.Join(missing, ", "))}
	}
	res, err := Assemble(p.Name, lines, p.Export)
	if err != nil {
		return Result{}, &kindError{studio.ErrInvalid, err.Error()}
	}
	return res, nil
}

// lineOf is project line l as the scene joins it, spoken by its chosen
// take t (its audio pcm): the one place a line's settings reach the scene
// (the export's and the preview's). who names its speaker in captions.
func lineOf(l projects.Line, t takes.Take, pcm []float32, who speakers) Line {
	line := Line{Take: t.ID, PCM: pcm, Rate: t.SampleRate, Text: t.Request.Text, Voice: who.name(l, t), PauseAfter: l.PauseAfter, FileName: l.FileName}
	if l.GainDB != nil {
		line.GainDB = *l.GainDB
	}
	return line
}

// speakers names who says each line of a project in its captions.
type speakers struct {
	characters []string // the project's names of its speakers
	several    bool     // its lines have more than one speaker
}

func speakersOf(p projects.Project) speakers {
	who := speakers{characters: p.Characters}
	for _, l := range p.Lines {
		who.several = who.several || l.Speaker != p.Lines[0].Speaker
	}
	return who
}

// name is who says line l, spoken by take t: the name the project gives
// its speaker, else the voice t was cast in, else "Speaker N" in a scene
// of several speakers ("": nobody named).
func (who speakers) name(l projects.Line, t takes.Take) string {
	switch {
	case l.Speaker < len(who.characters) && who.characters[l.Speaker] != "":
		return who.characters[l.Speaker]
	case len(t.Voices) == 1:
		return t.Voices[0]
	case who.several:
		return fmt.Sprintf("Speaker %d", l.Speaker)
	}
	return ""
}

// write writes an export file; a variable so tests can make the disk full.
var write = pcm.WriteFileAtomic

// Write writes res's scene to path and its line files beside it (named
// after path), each atomically. No file is replaced unless overwrite; a
// failure says why and leaves the files written before it.
func Write(res Result, base, path string, overwrite bool) ([]string, error) {
	if path == "" || !filepath.IsAbs(path) || strings.ContainsRune(path, 0) || len(path) > 4096 {
		return nil, &kindError{studio.ErrInvalid, fmt.Sprintf("the scene's path must be an absolute file path, got %q", path)}
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, &kindError{studio.ErrInvalid, fmt.Sprintf("the folder %s does not exist", dir)}
	}
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	paths := []string{path}
	for _, f := range res.Files[1:] {
		name := stem + strings.TrimPrefix(f.Name, base)
		if f.Own {
			name = f.Name
		}
		paths = append(paths, filepath.Join(dir, name))
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	if err := distinctNames(names); err != nil {
		return nil, &kindError{studio.ErrInvalid, err.Error()}
	}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			return nil, &kindError{studio.ErrInvalid, fmt.Sprintf("%s is a directory; give a file name", p)}
		case err == nil && !overwrite:
			return nil, &kindError{studio.ErrExists, fmt.Sprintf("%s already exists; nothing was written (choose another name, or confirm replacing it)", p)}
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return nil, err
		}
	}
	var written []string
	for i, f := range res.Files {
		if err := write(paths[i], f.Data); err != nil {
			return written, takes.ExplainWriteError(paths[i], err)
		}
		written = append(written, paths[i])
	}
	return written, nil
}

// Download is a scene as the browser saves it: one file, or a zip of the
// scene and its line files, and what the scene measures.
type Download struct {
	Name      string
	MediaType string
	Data      []byte
	Loudness  float64 // LUFS after the gain
	TruePeak  float64 // dBTP after the gain
	Limited   bool    // the gain stopped short of the target at the true-peak ceiling
	Note      string  // the line files kept quieter than the scene (Result.LoweredNote)
}

// AsDownload packs res for the browser (base names the zip).
func AsDownload(res Result, base string, now time.Time) (Download, error) {
	f, _ := encode.Lookup(strings.TrimPrefix(filepath.Ext(res.Files[0].Name), "."))
	d := Download{Name: res.Files[0].Name, Data: res.Files[0].Data, MediaType: f.ContentType(res.Rate),
		Loudness: res.Plan.Result, TruePeak: res.Plan.ResultTP, Limited: res.Plan.Limited, Note: res.LoweredNote()}
	if len(res.Files) > 1 {
		data, err := Zip(res.Files, now)
		if err != nil {
			return Download{}, err
		}
		d.Name, d.Data, d.MediaType = base+".zip", data, "application/zip"
	}
	return d, nil
}
