package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"proscenium/app"
	"proscenium/app/projects"
	"proscenium/app/scene"
	"proscenium/app/takes"
)

func init() {
	register(command{name: "scene", summary: "export a project's scene (its lines' chosen takes) as the studio's Export scene does", run: func(args []string) error {
		return runScene(args, os.Stdout, os.Stderr)
	}})
}

// runScene: proscenium scene --project NAME --out FILE. It reads the
// project and the takes the studio saved, without opening either for
// writing (a running studio is left alone), and writes the scene, its
// line files and captions as the project's export settings say, the flags
// given overriding them. Nothing is replaced without --overwrite.
func runScene(args []string, out, log io.Writer) error {
	fs := newFlags("scene")
	name := fs.String("project", "", "the project's name, as the studio shows it (required)")
	outPath := fs.String("out", "", "the scene's file; its extension (.wav, .flac, .mp3, .opus) picks the format, none takes the project's (required)")
	over := defineSceneFlags(fs)
	overwrite := fs.Bool("overwrite", false, "replace files that exist")
	projectsDir := fs.String("projects-dir", projects.DefaultDir(), "the studio's projects folder")
	takesDir := fs.String("takes-dir", takes.DefaultDir(), "the studio's takes folder")
	asJSON := fs.Bool("json", false, "print what was written and what the scene measures as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: proscenium scene --project NAME --out FILE [--format F] [--loudness LUFS] [--gap S] [--captions srt|vtt|none] [--per-line] [--trim-silence] [--overwrite] [--json]\n\nThe scene of a project the studio saved, from its lines' chosen takes; the project's export settings unless a flag says otherwise.")
		fs.PrintDefaults()
	}
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	switch {
	case *name == "":
		return fmt.Errorf("%w: --project is required", errUsage)
	case *outPath == "":
		return fmt.Errorf("%w: --out is required", errUsage)
	}
	store := projects.NewStore(*projectsDir)
	p, err := store.Read(*name)
	if err != nil {
		return fmt.Errorf("%w (%s)", err, projectsIn(store))
	}
	path, err := filepath.Abs(*outPath)
	if err != nil {
		return err
	}
	if p.Export, path, err = sceneExportFlags(fs, p.Export, path, over); err != nil {
		return err
	}
	res, err := scene.FromProject(p, takes.OpenStored(*takesDir))
	if err != nil {
		return err
	}
	files, err := scene.Write(res, p.Name, path, *overwrite)
	if err != nil {
		return err
	}
	sum := app.SceneExportResult{Files: files, Plan: res.Plan, Seconds: res.Seconds, LineFiles: res.LineFiles, Note: res.LoweredNote()}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	limited := ""
	if res.Plan.Limited {
		limited = fmt.Sprintf(" (quieter than the %.1f LUFS target: the true peak would pass %.0f dBTP)", res.Plan.Target, scene.Ceiling)
	}
	fmt.Fprintf(log, "%s: %.2f s, %.1f LUFS, true peak %.1f dBTP%s\n", files[0], res.Seconds, res.Plan.Result, res.Plan.ResultTP, limited)
	for _, f := range files[1:] {
		fmt.Fprintf(log, "  and %s\n", f)
	}
	if sum.Note != "" {
		fmt.Fprintln(log, "  "+sum.Note)
	}
	return nil
}

// projectsIn says which projects dir holds, most recently saved first, for
// a name that was not one of them.
func projectsIn(store *projects.Store) string {
	list, err := store.List()
	if err != nil || len(list) == 0 {
		return "no projects in " + store.Dir()
	}
	var names []string
	for i, s := range list {
		if i == 8 {
			names = append(names, fmt.Sprintf("and %d more", len(list)-i))
			break
		}
		names = append(names, fmt.Sprintf("%q", s.Name))
	}
	return fmt.Sprintf("projects in %s: %s", store.Dir(), strings.Join(names, ", "))
}

// sceneFlags are the flags that may override a project's export settings.
type sceneFlags struct {
	format, captions *string
	target, gap      *float64
	perLine, trim    *bool
}

// defineSceneFlags defines on fs the flags that may override a project's
// export settings.
func defineSceneFlags(fs *flag.FlagSet) sceneFlags {
	return sceneFlags{
		format:   fs.String("format", "", "wav, flac, mp3 or opus (default: the project's, or --out's extension)"),
		target:   fs.Float64("loudness", 0, "the loudness target in LUFS, -40 to -5 (default: the project's)"),
		gap:      fs.Float64("gap", 0, "the silence between lines in seconds, 0 to 10 (default: the project's; a line's own pause still replaces it)"),
		captions: fs.String("captions", "", "captions beside the scene: srt, vtt or none (default: the project's)"),
		perLine:  fs.Bool("per-line", false, "one file per line too (default: the project's)"),
		trim:     fs.Bool("trim-silence", false, "cut each take's silence at its ends, so the gap is between voices (default: the project's; --trim-silence=false keeps every sample)"),
	}
}

// sceneExportFlags applies the flags given to the project's export
// settings: --out's extension is the format unless --format says it (they
// must agree), and an --out without one gets the format's.
func sceneExportFlags(fs *flag.FlagSet, ex projects.ExportSettings, path string, over sceneFlags) (projects.ExportSettings, string, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	format := *over.format
	if set["format"] {
		ex.Format = format
	}
	if ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")); ext != "" {
		switch {
		case !slices.Contains(projects.SceneFormats, ext):
			return ex, "", fmt.Errorf("%w: --out %s: a scene is .wav, .flac, .mp3 or .opus", errUsage, path)
		case set["format"] && ext != format:
			return ex, "", fmt.Errorf("%w: --out ends in .%s but --format is %s", errUsage, ext, format)
		}
		ex.Format = ext
	} else {
		path += "." + ex.Format
	}
	if set["loudness"] {
		ex.TargetLUFS = *over.target
	}
	if set["gap"] {
		ex.GapSeconds = *over.gap
	}
	if set["captions"] {
		ex.Captions = *over.captions
		if ex.Captions == "none" {
			ex.Captions = projects.CaptionsNone
		}
	}
	if set["per-line"] {
		ex.PerLine = *over.perLine
	}
	if set["trim-silence"] {
		ex.TrimSilence = *over.trim
	}
	if err := ex.Check(); err != nil {
		return ex, "", fmt.Errorf("%w: %v", errUsage, err)
	}
	return ex, path, nil
}
