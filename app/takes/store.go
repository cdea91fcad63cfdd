package takes

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/adrg/xdg"

	"proscenium/app/internal/files"
	"proscenium/app/playback"
	"proscenium/app/settings"
)

// This file keeps takes on disk: one directory per take,
//
//	<takes dir>/<id>/take.json   the take (text, settings, seed, state, finish
//	                             reason, figures, name) and its codes
//	<takes dir>/<id>/pcm.f32     its audio: mono float32 little-endian, 44.1 kHz
//
// A take is written into a temporary directory beside the others and renamed
// into place, so a crash leaves either the whole take or none of it; such
// leftovers are removed at the next start (cleanTemps). A directory that
// cannot be read back (corrupt JSON, wrong sizes) is reported and skipped,
// never fatal, and left on disk for the user to look at: new takes get ids
// above every numeric folder, so it is never reused or replaced.
//
// Size limit: the takes together may hold at most Settings.TakesLimitBytes.
// Saving a take that would pass it removes the oldest stored takes first
// (each removal is announced); a take larger than the whole limit is kept for
// this session only and not written.

const (
	takeMetaFile  = "take.json"
	takePCMFile   = "pcm.f32"
	takeFileVer   = 2        // 1: before the figures said their units (store_format1.go)
	maxTakeMeta   = 64 << 20 // codes of 65536 frames × 10 codebooks fit
	maxStoredPCM  = 4 << 30
	pcmFormatName = "float32le"
)

// DefaultDir is $XDG_DATA_HOME/proscenium/takes.
func DefaultDir() string { return filepath.Join(xdg.DataHome, "proscenium", "takes") }

// takeFile is take.json.
type takeFile struct {
	Format    int     `json:"format"`
	Take      Take    `json:"take"`
	Codes     [][]int `json:"codes"`
	PCMFile   string  `json:"pcm_file"`
	PCMFormat string  `json:"pcm_format"`
}

// takeRecord is one take of the list with what is not sent to the UI.
type takeRecord struct {
	take  *Take
	codes [][]int
	pcm   []float32 // in memory while running, and for takes not on disk
	bytes int64     // bytes on disk (0: not stored)
}

type takeStore struct {
	dir string // "" keeps takes in memory only
}

func (st takeStore) takeDir(id int) string { return filepath.Join(st.dir, strconv.Itoa(id)) }

// loadAll reads every take directory, oldest (lowest id) first. Problems
// name the directories that were skipped and why. maxID is the highest id
// any numeric folder (read or not) or interrupted save uses: new takes get
// higher ids, so a folder that was skipped is never reused or replaced.
func (st takeStore) loadAll() (recs []*takeRecord, problems []string, maxID int) {
	if st.dir == "" {
		return nil, nil, 0
	}
	entries, err := os.ReadDir(st.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, 0
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("takes directory %s: %v", st.dir, err)}, 0
	}
	for _, e := range entries {
		if id, ok := tempTakeID(e.Name()); ok {
			maxID = max(maxID, id)
			continue
		}
		id, err := strconv.Atoi(e.Name())
		if err != nil || id <= 0 || strconv.Itoa(id) != e.Name() {
			continue // foreign files
		}
		maxID = max(maxID, id)
		rec, err := st.load(id)
		if err != nil {
			problems = append(problems, fmt.Sprintf("skipped take %s (left as it is): %v", filepath.Join(st.dir, e.Name()), err))
			continue
		}
		recs = append(recs, rec)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].take.ID < recs[j].take.ID })
	return recs, problems, maxID
}

// tempTakePrefix starts the temporary directory a take is written into
// (".take-<id>-<random digits>") before it is renamed to <id>.
const tempTakePrefix = ".take-"

// tempTakeID reports whether name is one of our temporary take directories,
// and the id it was for.
func tempTakeID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, tempTakePrefix)
	if !ok {
		return 0, false
	}
	idStr, random, ok := strings.Cut(rest, "-")
	id, err := strconv.Atoi(idStr)
	if !ok || err != nil || id <= 0 || strconv.Itoa(id) != idStr || random == "" || strings.Trim(random, "0123456789") != "" {
		return 0, false
	}
	return id, true
}

// cleanTemps removes what interrupted saves left: our temporary take
// directories in the takes directory and our temporary take.json files in
// the take directories (files.WriteAtomic's ".take.json.*"), when untouched
// for files.StaleAfter. Nothing else is touched. What cannot be removed is
// reported and its bytes returned, to be counted against the takes limit.
func (st takeStore) cleanTemps(now time.Time) (removed int, leftBytes int64, problems []string) {
	if st.dir == "" {
		return 0, 0, nil
	}
	entries, err := os.ReadDir(st.dir)
	if err != nil {
		return 0, 0, nil // loadAll reports an unreadable directory
	}
	var temps []string
	for _, e := range entries {
		if _, ok := tempTakeID(e.Name()); ok && e.IsDir() {
			temps = append(temps, filepath.Join(st.dir, e.Name()))
			continue
		}
		if id, err := strconv.Atoi(e.Name()); err == nil && id > 0 && e.IsDir() {
			inner, _ := os.ReadDir(filepath.Join(st.dir, e.Name()))
			for _, f := range inner {
				if strings.HasPrefix(f.Name(), "."+takeMetaFile+".") && f.Type().IsRegular() {
					temps = append(temps, filepath.Join(st.dir, e.Name(), f.Name()))
				}
			}
		}
	}
	for _, p := range temps {
		size, newest := treeSize(p)
		if now.Sub(newest) < files.StaleAfter {
			leftBytes += size // a save in progress elsewhere: counted, not touched
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			problems = append(problems, fmt.Sprintf("could not remove %s, left by an interrupted save: %v", p, err))
			leftBytes += size
			continue
		}
		removed++
	}
	return removed, leftBytes, problems
}

// treeSize sums the sizes of a file or directory tree and finds its newest
// modification time.
func treeSize(path string) (size int64, newest time.Time) {
	filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if fi.Mode().IsRegular() {
				size += fi.Size()
			}
			if fi.ModTime().After(newest) {
				newest = fi.ModTime()
			}
		}
		return nil
	})
	return size, newest
}

func (st takeStore) load(id int) (*takeRecord, error) {
	dir := st.takeDir(id)
	data, err := files.ReadCapped(filepath.Join(dir, takeMetaFile), maxTakeMeta)
	if err != nil {
		return nil, err
	}
	tf, err := parseTakeMeta(data, id)
	if err != nil {
		return nil, err
	}
	t := &tf.Take
	fi, err := os.Stat(filepath.Join(dir, takePCMFile))
	if err != nil {
		return nil, err
	}
	if fi.Size() != 4*int64(t.Samples) {
		return nil, fmt.Errorf("%s is %d bytes, take.json says %d samples (%d bytes)", takePCMFile, fi.Size(), t.Samples, 4*int64(t.Samples))
	}
	t.Stored = true
	if t.Finish != nil {
		t.Finish.Codes = nil
	}
	return &takeRecord{take: t, codes: tf.Codes, bytes: int64(len(data)) + fi.Size()}, nil
}

// parseTakeMeta decodes and checks take.json of directory id.
func parseTakeMeta(data []byte, id int) (*takeFile, error) {
	data, err := upgradeFormat1(data)
	if err != nil {
		return nil, fmt.Errorf("%s: format 1: %v", takeMetaFile, err)
	}
	var tf takeFile
	if err := files.DecodeStrict(data, &tf); err != nil {
		return nil, fmt.Errorf("%s: %v", takeMetaFile, err)
	}
	t := &tf.Take
	switch {
	case tf.Format != takeFileVer:
		return nil, fmt.Errorf("%s: format %d, want %d", takeMetaFile, tf.Format, takeFileVer)
	case tf.PCMFile != takePCMFile || tf.PCMFormat != pcmFormatName:
		return nil, fmt.Errorf("%s: audio %q as %q, want %q as %q", takeMetaFile, tf.PCMFile, tf.PCMFormat, takePCMFile, pcmFormatName)
	case t.ID != id:
		return nil, fmt.Errorf("%s: id %d in directory %d", takeMetaFile, t.ID, id)
	case t.State != TakeFinished && t.State != TakeFailed:
		return nil, fmt.Errorf("%s: state %q", takeMetaFile, t.State)
	case t.Samples < 0 || int64(t.Samples)*4 > maxStoredPCM || t.SampleRate != playback.OutputSampleRate:
		return nil, fmt.Errorf("%s: %d samples at %d Hz", takeMetaFile, t.Samples, t.SampleRate)
	case t.State == TakeFinished && (t.Finish == nil || len(tf.Codes) != t.Finish.Frames):
		return nil, fmt.Errorf("%s: codes of %d frames for a finished take of %v", takeMetaFile, len(tf.Codes), t.Finish)
	}
	if err := settings.ValidateSpeech(t.Request); err != nil {
		return nil, fmt.Errorf("%s: request: %v", takeMetaFile, err)
	}
	return &tf, nil
}

// save writes rec as a new take directory and returns its size on disk.
func (st takeStore) save(rec *takeRecord, t *Take) (int64, error) {
	meta, err := st.encodeMeta(t, rec.codes)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(st.dir, 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp(st.dir, tempTakePrefix+strconv.Itoa(t.ID)+"-*")
	if err != nil {
		return 0, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	pcm := EncodeFloat32LE(rec.pcm)
	if err := writeSynced(filepath.Join(tmp, takePCMFile), pcm); err != nil {
		return 0, err
	}
	if err := writeSynced(filepath.Join(tmp, takeMetaFile), meta); err != nil {
		return 0, err
	}
	final := st.takeDir(t.ID)
	// Ids start above every folder found, so one here was made since (by
	// another studio sharing the directory): never replace it.
	if _, err := os.Lstat(final); !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%s already exists (another studio using the same takes directory?)", final)
	}
	if err := os.Rename(tmp, final); err != nil {
		return 0, err
	}
	ok = true
	return int64(len(meta) + len(pcm)), nil
}

// rewriteMeta replaces take.json of a stored take (a rename).
func (st takeStore) rewriteMeta(rec *takeRecord) (int64, error) {
	meta, err := st.encodeMeta(rec.take, rec.codes)
	if err != nil {
		return 0, err
	}
	if err := files.WriteAtomic(filepath.Join(st.takeDir(rec.take.ID), takeMetaFile), meta); err != nil {
		return 0, err
	}
	return int64(len(meta)) + 4*int64(rec.take.Samples), nil
}

func (st takeStore) encodeMeta(take *Take, codes [][]int) ([]byte, error) {
	t := *take
	t.Stored = false
	return json.Marshal(takeFile{Format: takeFileVer, Take: t, Codes: codes, PCMFile: takePCMFile, PCMFormat: pcmFormatName})
}

func (st takeStore) remove(id int) error { return os.RemoveAll(st.takeDir(id)) }

// readPCM reads a stored take's audio.
func (st takeStore) readPCM(t *Take) ([]float32, error) {
	if int64(t.Samples)*4 > maxStoredPCM {
		return nil, fmt.Errorf("take %d: %d samples is more than a take can hold", t.ID, t.Samples)
	}
	data, err := files.ReadCapped(filepath.Join(st.takeDir(t.ID), takePCMFile), 4*int64(t.Samples))
	if err != nil {
		return nil, fmt.Errorf("take %d audio: %w", t.ID, err)
	}
	if len(data) != 4*t.Samples {
		return nil, fmt.Errorf("take %d audio: %d bytes, want %d", t.ID, len(data), 4*t.Samples)
	}
	pcm := make([]float32, t.Samples)
	for i := range pcm {
		pcm[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return pcm, nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// EncodeFloat32LE is pcm as float32 little-endian bytes: a stored take's
// audio file, and the PCM the browser fetches.
func EncodeFloat32LE(pcm []float32) []byte {
	b := make([]byte, 4*len(pcm))
	for i, v := range pcm {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}
