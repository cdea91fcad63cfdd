// Package voicelib is the library of reference voices: for each, the
// recording as the user gave it, its transcript, and its codes from the codec
// encoder, cached so that a reference is encoded once. Entries live under a
// directory (the XDG data directory's proscenium/voices), one folder each,
// and are validated whenever they are loaded: the recording's hash, the
// codes' shape and range, and the codec that made them.
package voicelib

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/adrg/xdg"

	"proscenium/app/internal/files"
	"proscenium/engine/audio/decode"
	"proscenium/engine/audio/pcm"
	"proscenium/engine/checkpoint"
	"proscenium/internal/jsonerr"
)

// DefaultDir is where the studio and proscenium serve keep the library.
func DefaultDir() string { return filepath.Join(xdg.DataHome, "proscenium", "voices") }

// Limits.
const (
	MaxAudioBytes      = 16 << 20 // a recording as uploaded
	MaxTranscriptBytes = 2 << 10
)

// Encoder is the codec encoder the library caches codes from. ID names the
// codec (a hash of its weights): codes made by another codec are re-made.
type Encoder interface {
	// EncodeReference encodes mono samples at the codec's rate: codes
	// frame-major, Codebooks per frame (api.ReferenceEncoder's shape).
	EncodeReference(samples []float32) (codes []int32, frames int, err error)
	Codebooks() int
	ID() string
}

// Entry is one reference in the library.
type Entry struct {
	ID          string  `json:"id"` // SHA-256 (hex) of the recording and transcript, also the folder's name
	Transcript  string  `json:"transcript"`
	AudioFile   string  `json:"audio_file"` // the recording's file name in the folder
	Format      string  `json:"format"`
	Seconds     float64 `json:"duration_s"`
	SourceRate  int     `json:"source_rate_hz"`
	Frames      int     `json:"frames"`
	CodecID     string  `json:"codec_id"`
	AudioSHA256 string  `json:"audio_sha256"`
}

// Library is a directory of entries. It is safe for concurrent use.
type Library struct {
	// MaxBytes bounds the files of every entry together (0:
	// DefaultMaxBytes): Add refuses past it (ErrFull).
	MaxBytes int64

	dir string
	mu  sync.Mutex
}

// Open returns the library in dir, creating the directory.
func Open(dir string) (*Library, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("voice library: %w", err)
	}
	return &Library{dir: dir}, nil
}

// Dir is the library's directory.
func (l *Library) Dir() string { return l.dir }

var idPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ErrNotFound is returned (wrapped) for an id the library does not hold.
var ErrNotFound = errors.New("no such reference in the voice library")

// Add stores a recording and its transcript, encoding it with enc: the
// recording is read (decode.ReadReference: any supported format, 2–30 s,
// not silent), encoded, and written with its codes and manifest. An entry
// is a recording with its transcript (its id hashes both): the same
// recording with another transcript is another entry, so voices never
// share a transcript they did not give. Nothing is written when reading or
// encoding fails.
func (l *Library) Add(recording []byte, transcript string, enc Encoder) (*Entry, error) {
	if len(recording) > MaxAudioBytes {
		return nil, fmt.Errorf("the recording is %d bytes, more than the limit of %d", len(recording), MaxAudioBytes)
	}
	transcript = strings.TrimSpace(transcript)
	if err := checkTranscript(transcript); err != nil {
		return nil, err
	}
	ref, err := decode.ReadReference(recording)
	if err != nil {
		return nil, err
	}
	flat, frames, err := enc.EncodeReference(ref.Samples)
	if err != nil {
		return nil, fmt.Errorf("encoding the reference: %w", err)
	}
	sum := sha256.Sum256(recording)
	audioSum := hex.EncodeToString(sum[:])
	idSum := sha256.Sum256([]byte(audioSum + "\x00" + transcript))
	id := hex.EncodeToString(idSum[:])
	e := &Entry{ID: id, Transcript: transcript, AudioFile: "reference" + extension(ref.Format), Format: string(ref.Format),
		Seconds: ref.Seconds(), SourceRate: ref.SourceRate, Frames: frames, CodecID: enc.ID(), AudioSHA256: audioSum}
	l.mu.Lock()
	defer l.mu.Unlock()
	dir := filepath.Join(l.dir, id)
	if _, err := os.Stat(filepath.Join(dir, "voice.json")); err != nil {
		// A new entry: the recording, its codes (int64) and the manifest.
		size := int64(len(recording)) + int64(frames)*int64(enc.Codebooks())*8 + 4<<10
		if err := l.checkRoom(size); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("voice library: %w", err)
	}
	if err := pcm.WriteFileAtomic(filepath.Join(dir, e.AudioFile), recording); err != nil {
		return nil, fmt.Errorf("voice library: %w", err)
	}
	if err := writeCodes(dir, flat, frames, enc.Codebooks()); err != nil {
		return nil, err
	}
	if err := writeManifest(dir, e); err != nil {
		return nil, err
	}
	return e, nil
}

func extension(f decode.Format) string {
	switch f {
	case decode.WAV:
		return ".wav"
	case decode.FLAC:
		return ".flac"
	case decode.MP3:
		return ".mp3"
	case decode.Opus:
		return ".opus"
	}
	return ".audio"
}

func checkTranscript(t string) error {
	switch {
	case t == "":
		return fmt.Errorf("the transcript is empty: type what the recording says")
	case !utf8.ValidString(t):
		return fmt.Errorf("the transcript is not valid UTF-8")
	case len(t) > MaxTranscriptBytes:
		return fmt.Errorf("the transcript is %d bytes, more than the limit of %d", len(t), MaxTranscriptBytes)
	case strings.Contains(t, "<|"):
		return fmt.Errorf("the transcript holds a structural token (<|…|>): only what the recording says")
	}
	return nil
}

func writeCodes(dir string, codes []int32, frames, nb int) error {
	v := make([]int64, len(codes))
	for f := 0; f < frames; f++ {
		for i := 0; i < nb; i++ {
			v[i*frames+f] = int64(codes[f*nb+i])
		}
	}
	path := filepath.Join(dir, "codes.npy")
	tmp := path + ".tmp"
	if err := checkpoint.WriteNPYFile(tmp, checkpoint.Int64Tensor("codes", []int{nb, frames}, v)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("voice library: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("voice library: %w", err)
	}
	return nil
}

func writeManifest(dir string, e *Entry) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	if err := pcm.WriteFileAtomic(filepath.Join(dir, "voice.json"), append(b, '\n')); err != nil {
		return fmt.Errorf("voice library: %w", err)
	}
	return nil
}

// Load returns an entry and its codes (frames × codebooks, codebook 0
// first), validating it: the manifest, the recording's hash, the codes'
// shape ([codebooks, frames] as the manifest says) and that they were made
// by enc's codec. Codes from another codec, or missing or damaged codes, are
// re-made from the recording (and saved); a damaged recording or manifest is
// an error naming it.
func (l *Library) Load(id string, enc Encoder) (*Entry, [][]int, error) {
	if !idPattern.MatchString(id) {
		return nil, nil, fmt.Errorf("%w: %q is not a reference id", ErrNotFound, id)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	dir := filepath.Join(l.dir, id)
	e, rec, err := readStored(dir, id)
	if err != nil {
		return nil, nil, err
	}
	if e.CodecID == enc.ID() {
		if codes, err := readCodes(dir, e.Frames, enc.Codebooks()); err == nil {
			return &e, codes, nil
		}
	}
	// Re-make the codes for this codec.
	ref, err := decode.ReadReference(rec)
	if err != nil {
		return nil, nil, fmt.Errorf("voice library: the recording of %s: %w", id, err)
	}
	flat, frames, err := enc.EncodeReference(ref.Samples)
	if err != nil {
		return nil, nil, fmt.Errorf("voice library: encoding %s: %w", id, err)
	}
	if err := writeCodes(dir, flat, frames, enc.Codebooks()); err != nil {
		return nil, nil, err
	}
	e.Frames, e.CodecID = frames, enc.ID()
	if err := writeManifest(dir, &e); err != nil {
		return nil, nil, err
	}
	codes, err := readCodes(dir, e.Frames, enc.Codebooks())
	return &e, codes, err
}

// maxManifestBytes bounds voice.json (a transcript of MaxTranscriptBytes and
// a few fields).
const maxManifestBytes = 64 << 10

// readStored reads the reference id stored in dir: its manifest, which must
// describe it, and its recording, checked against the manifest's hash. Both
// are read as regular files within their limits (files.ReadCapped). A
// reference without a manifest is ErrNotFound.
func readStored(dir, id string) (Entry, []byte, error) {
	var e Entry
	raw, err := files.ReadCapped(filepath.Join(dir, "voice.json"), maxManifestBytes)
	if errors.Is(err, os.ErrNotExist) {
		return e, nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return e, nil, fmt.Errorf("voice library: %w", err)
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, nil, fmt.Errorf("voice library: %s/voice.json is damaged: %w", id, jsonerr.Phrase(err))
	}
	if e.ID != id || e.AudioFile == "" || e.AudioFile != filepath.Base(e.AudioFile) || checkTranscript(e.Transcript) != nil {
		return e, nil, fmt.Errorf("voice library: %s/voice.json does not describe this reference", id)
	}
	rec, err := files.ReadCapped(filepath.Join(dir, e.AudioFile), MaxAudioBytes)
	if err != nil {
		return e, nil, fmt.Errorf("voice library: the recording of %s: %w", id, err)
	}
	if sum := sha256.Sum256(rec); hex.EncodeToString(sum[:]) != e.AudioSHA256 {
		return e, nil, fmt.Errorf("voice library: the recording of %s has changed since it was added (its hash differs)", id)
	}
	return e, rec, nil
}

// readCodes reads codes.npy, which must be int64 [nb, frames] with codes
// that are not negative.
func readCodes(dir string, frames, nb int) ([][]int, error) {
	t, err := checkpoint.ReadNPYFile(filepath.Join(dir, "codes.npy"))
	if err != nil {
		return nil, err
	}
	if len(t.Shape) != 2 || t.Shape[0] != nb || t.Shape[1] != frames || frames < 1 {
		return nil, fmt.Errorf("codes.npy has shape %v, want [%d, %d]", t.Shape, nb, frames)
	}
	v, err := checkpoint.TensorInt64s(t)
	if err != nil {
		return nil, err
	}
	out := make([][]int, frames)
	for f := range out {
		out[f] = make([]int, nb)
		for i := 0; i < nb; i++ {
			c := v[i*frames+f]
			if c < 0 || c > 1<<20 {
				return nil, fmt.Errorf("codes.npy: code %d at frame %d codebook %d", c, f, i)
			}
			out[f][i] = int(c)
		}
	}
	return out, nil
}

// Delete removes a reference and its files.
func (l *Library) Delete(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("%w: %q is not a reference id", ErrNotFound, id)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	dir := filepath.Join(l.dir, id)
	if _, err := os.Stat(filepath.Join(dir, "voice.json")); err != nil {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return os.RemoveAll(dir)
}

// Recording returns a reference's recording as stored and its file name,
// checked against the manifest's hash.
func (l *Library) Recording(id string) ([]byte, string, error) {
	if !idPattern.MatchString(id) {
		return nil, "", fmt.Errorf("%w: %q is not a reference id", ErrNotFound, id)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, rec, err := readStored(filepath.Join(l.dir, id), id)
	if err != nil {
		return nil, "", err
	}
	return rec, e.AudioFile, nil
}
