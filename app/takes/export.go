package takes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/adrg/xdg"

	"proscenium/app/internal/files"
	"proscenium/app/studio"
	"proscenium/engine/audio/pcm"
)

// Export formats.
const (
	ExportWAV16    = "wav-pcm16"   // WAV, 16-bit PCM (rounded, clipped)
	ExportWAVFloat = "wav-float32" // WAV, 32-bit IEEE float
	ExportRaw16    = "raw-pcm16"   // headerless 16-bit little-endian
	ExportRawFloat = "raw-float32" // headerless float32 little-endian
)

type exportFormat struct {
	wav    bool
	sample pcm.Format
	ext    string
	label  string
}

func parseExportFormat(name string) (exportFormat, error) {
	switch name {
	case ExportWAV16, "":
		return exportFormat{true, pcm.PCM16, ".wav", "WAV (16-bit PCM)"}, nil
	case ExportWAVFloat:
		return exportFormat{true, pcm.Float32, ".wav", "WAV (32-bit float)"}, nil
	case ExportRaw16:
		return exportFormat{false, pcm.PCM16, ".pcm", "raw PCM (16-bit little-endian, 44.1 kHz mono)"}, nil
	case ExportRawFloat:
		return exportFormat{false, pcm.Float32, ".f32", "raw PCM (float32 little-endian, 44.1 kHz mono)"}, nil
	}
	return exportFormat{}, fmt.Errorf("%w: export format %q (want %s, %s, %s or %s)", studio.ErrInvalid, name, ExportWAV16, ExportWAVFloat, ExportRaw16, ExportRawFloat)
}

// ExportRequest exports take ID to Path ("" asks for none: see
// DefaultExportPath) in Format (ExportWAV16 when ""). An existing file is
// replaced only with Overwrite (set once the user has confirmed it, as the
// native save dialog does).
type ExportRequest struct {
	ID        int    `json:"id"`
	Path      string `json:"path"`
	Format    string `json:"format"`
	Overwrite bool   `json:"overwrite"`
}

// ExportResult is what was written.
type ExportResult struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	Samples int    `json:"samples"`
	Format  string `json:"format"`
}

// DefaultExportDir is the XDG music directory.
func DefaultExportDir() string { return xdg.UserDirs.Music }

// DefaultExportPath proposes <music dir>/proscenium-take-<id>[-name].<ext>.
func (l *List) DefaultExportPath(r ExportRequest) (string, error) {
	f, err := parseExportFormat(r.Format)
	if err != nil {
		return "", err
	}
	name, err := l.exportName(r.ID, f)
	if err != nil {
		return "", err
	}
	return filepath.Join(DefaultExportDir(), name), nil
}

// exportName is proscenium-take-<id>[-name].<ext>: a file name of letters,
// digits and dashes.
func (l *List) exportName(id int, f exportFormat) (string, error) {
	l.mu.Lock()
	_, rec := l.find(id)
	var name string
	if rec != nil {
		name = rec.take.Name
	}
	l.mu.Unlock()
	if rec == nil {
		return "", fmt.Errorf("%w: no take #%d", studio.ErrNotFound, id)
	}
	base := exportNamePrefix + strconv.Itoa(id)
	if slug := slugOf(name); slug != "" {
		base += "-" + slug
	}
	return base + f.ext, nil
}

// exportNamePrefix starts every proposed export name (exportName).
const exportNamePrefix = "proscenium-take-"

// RemoveStaleExportTemps removes what a killed export to a proposed name
// left in dir: pcm.WriteFileAtomic's ".<name>.tmp-<digits>" files. It
// reports what it could not remove.
func RemoveStaleExportTemps(dir string, now time.Time) []string {
	return files.RemoveStale(dir, "."+exportNamePrefix, now, func(name string) bool {
		_, digits, ok := strings.Cut(name, ".tmp-")
		return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
	})
}

// slugOf keeps letters, digits and dashes of a name, for file names.
func slugOf(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// writeExport writes an export file; a variable so tests can make the disk
// full. It must leave nothing behind when it fails (pcm.WriteFileAtomic).
var writeExport = pcm.WriteFileAtomic

// ExportTake writes a take as WAV or raw PCM, atomically: a temporary file
// beside the target, synced, renamed over it. A full disk, a read-only or
// missing directory gives an error saying so, and nothing is left behind.
func (l *List) ExportTake(r ExportRequest) (ExportResult, error) {
	f, err := parseExportFormat(r.Format)
	if err != nil {
		return ExportResult{}, err
	}
	if r.Format == "" {
		r.Format = ExportWAV16
	}
	path := r.Path
	if path == "" {
		return ExportResult{}, fmt.Errorf("%w: no export path given", studio.ErrInvalid)
	}
	if strings.ContainsRune(path, 0) || len(path) > 4096 {
		return ExportResult{}, fmt.Errorf("%w: the export path is not a usable path", studio.ErrInvalid)
	}
	if !filepath.IsAbs(path) {
		return ExportResult{}, fmt.Errorf("%w: the export path must be absolute, got %q", studio.ErrInvalid, path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return ExportResult{}, fmt.Errorf("%w: %s is a directory; give a file name", studio.ErrInvalid, path)
	} else if err == nil && !r.Overwrite {
		return ExportResult{}, fmt.Errorf("%w: %s already exists; nothing was written (choose another name, or confirm replacing it)", studio.ErrExists, path)
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ExportResult{}, fmt.Errorf("%w: cannot export to %s: the folder %s does not exist", studio.ErrInvalid, path, dir)
	}
	data, samples, err := l.encodeTake(r.ID, f)
	if err != nil {
		return ExportResult{}, err
	}
	if err := writeExport(path, data); err != nil {
		return ExportResult{}, ExplainWriteError(path, err)
	}
	res := ExportResult{Path: path, Bytes: int64(len(data)), Samples: samples, Format: r.Format}
	l.events.Notice(studio.NoticeInfo, fmt.Sprintf("exported take #%d to %s (%s, %s)", r.ID, path, f.label, studio.ByteSize(res.Bytes)))
	return res, nil
}

// TakeFile is a take encoded in the named format, with its proposed file
// name and media type (what the browser downloads).
func (l *List) TakeFile(id int, format string) (name, mediaType string, data []byte, err error) {
	f, err := parseExportFormat(format)
	if err != nil {
		return "", "", nil, err
	}
	if name, err = l.exportName(id, f); err != nil {
		return "", "", nil, err
	}
	mediaType = "application/octet-stream"
	if f.wav {
		mediaType = "audio/wav"
	}
	data, _, err = l.encodeTake(id, f)
	return name, mediaType, data, err
}

// encodeTake encodes a finished take's audio in format f.
func (l *List) encodeTake(id int, f exportFormat) (data []byte, samples int, err error) {
	takeAudio, t, err := l.TakePCM(id)
	if err != nil {
		return nil, 0, err
	}
	if t.State == TakeRunning {
		return nil, 0, fmt.Errorf("%w: take #%d is still running", studio.ErrBusy, id)
	}
	if f.wav {
		data, err = pcm.EncodeWAV(takeAudio, t.SampleRate, f.sample)
	} else {
		data, err = pcm.EncodeRaw(takeAudio, f.sample)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("take #%d: %w", id, err)
	}
	return data, len(takeAudio), nil
}

// ExplainWriteError names the common reasons a write of an export fails,
// in words (the scene export says them too).
func ExplainWriteError(path string, err error) error {
	why := ""
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		why = "the disk is full"
	case errors.Is(err, syscall.EROFS):
		why = "the disk is read-only"
	case errors.Is(err, fs.ErrPermission):
		why = "no permission to write there"
	}
	if why == "" {
		return fmt.Errorf("export to %s failed, nothing was written: %w", path, err)
	}
	return fmt.Errorf("export to %s failed: %s; nothing was written (%w)", path, why, err)
}

// ExportLabel names an export format for people ("WAV (16-bit PCM)"): the
// save dialog's title says it.
func ExportLabel(format string) (string, error) {
	f, err := parseExportFormat(format)
	return f.label, err
}
