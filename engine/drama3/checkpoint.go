package drama3

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"proscenium/engine/checkpoint"
	"proscenium/engine/demo"
	"proscenium/engine/tokenizer"
	"proscenium/internal/regular"
)

// This file is the checkpoint directory: the one place that knows its file
// names, and the opened Checkpoint that the backends build from. Every
// other package asks for a directory's parts here (LoadEngine for a take
// engine, Load for the weights alone, CodecPath for the reference encoder)
// and never joins a file name to the directory itself; a test in
// engine/drama3 greps the module for the names to keep it so.

// The files of a checkpoint directory besides the safetensors shards
// (checkpoint.OpenSafetensors finds those).
const (
	configFile    = "config.json"
	tokenizerFile = "tokenizer.json"
	codecFile     = "codec.pth"
)

// MaxConfigBytes bounds config.json (Drama 3's is 4 KB). Files read whole
// are checked before reading (internal/regular): a file over its
// limit (this one, tokenizer.MaxFileBytes, the index's), a device such as
// /dev/zero, or a FIFO is refused by name.
const MaxConfigBytes = 1 << 20

// Checkpoint is an opened checkpoint directory: its config, the safetensors
// headers and the weight map bound over them; LoadEngine also reads the
// tokenizer and the codec's decoder, everything a take engine needs, so
// that the directory is read in one place and the backends build from it.
type Checkpoint struct {
	Dir     string
	Config  *Config
	Index   *checkpoint.Index
	Weights *Weights
	Report  *BindReport // Report.Err() says whether Weights is complete

	// Set by LoadEngine only.
	Tokenizer *tokenizer.Tokenizer
	Codec     *CodecWeights // the codec's decoder
	Demo      bool          // the codec is the embedded random demo codec: speaks no words
}

// Open reads DIR/config.json and the safetensors headers of DIR and binds
// the weight map. The error covers what makes the directory unreadable (a
// bad config, a malformed, truncated or lying shard: the message names the
// file); binding problems are in Report. Close releases the files.
func Open(dir string) (*Checkpoint, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	ix, err := checkpoint.OpenSafetensors(dir)
	if err != nil {
		return nil, err
	}
	stored := make([]*Param, 0, ix.Len())
	for _, ti := range ix.Tensors() {
		stored = append(stored, &Param{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, File: ti.File, Offset: ti.Offset, Size: ti.Size})
	}
	w, rep := Bind(cfg, stored, ix)
	return &Checkpoint{Dir: dir, Config: cfg, Index: ix, Weights: w, Report: rep}, nil
}

// Load is Open that also fails when a tensor is missing or malformed: the
// weights alone (memory estimates, backbone tools).
func Load(dir string) (*Checkpoint, error) {
	ck, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if err := ck.Report.Err(); err != nil {
		ck.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return ck, nil
}

// LoadEngine is Load with the tokenizer and the codec's decoder read too:
// what a take engine is built from (engine/take.Compose).
func LoadEngine(dir string) (*Checkpoint, error) {
	tok, err := LoadTokenizer(dir)
	if err != nil {
		return nil, err
	}
	ck, err := Load(dir)
	if err != nil {
		return nil, err
	}
	ck.Tokenizer = tok
	if ck.Demo, err = UsesDemoCodec(dir); err == nil {
		ck.Codec, err = ReadCodecFile(CodecPath(dir), CodecOptions{})
	}
	if err != nil {
		ck.Close()
		return nil, err
	}
	return ck, nil
}

// Close releases the open shard files; the rest stays readable.
func (ck *Checkpoint) Close() error { return ck.Index.Close() }

// checkDir says why dir is no checkpoint folder at all, in words a user
// acts on: it does not exist, it is a file, or it has no config.json (a
// wrong folder, where the first file a reader opens would otherwise be
// named as the problem: "stat DIR/tokenizer.json: no such file or
// directory"). Such errors match fs.ErrNotExist. What is wrong inside a
// checkpoint is the readers' to say, by file.
func checkDir(dir string) error {
	if err := CheckFolder(dir); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, configFile)); errors.Is(err, fs.ErrNotExist) {
		return notExist(fmt.Sprintf("%s is not a Drama 3 checkpoint folder: it has no %s", dir, configFile))
	}
	return nil
}

// CheckFolder is checkDir's first half: dir exists and is a folder.
func CheckFolder(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notExist(dir + ": no such folder")
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is a file, not a checkpoint folder (give the folder that holds %s)", dir, configFile)
	}
	return nil
}

// firstReadError is err, a reader's failure on the first of dir's files it
// opens (config.json, tokenizer.json), or checkDir's reason where dir is no
// checkpoint folder at all. Only a failed read pays for the check.
func firstReadError(dir string, err error) error {
	if why := checkDir(dir); why != nil {
		return why
	}
	return err
}

// notExist is a message that matches fs.ErrNotExist without repeating it.
type notExist string

func (e notExist) Error() string        { return string(e) }
func (e notExist) Is(target error) bool { return target == fs.ErrNotExist }

// LoadConfig reads and validates DIR/config.json.
func LoadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, configFile)
	data, err := regular.ReadFile(path, MaxConfigBytes)
	if err != nil {
		return nil, firstReadError(dir, err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// StatConfig describes DIR/config.json: an error when it is missing or not
// a regular file (a directory without one is no checkpoint).
func StatConfig(dir string) (fs.FileInfo, error) {
	path := filepath.Join(dir, configFile)
	st, err := os.Stat(path)
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w", path, regular.ErrNotRegular)
	}
	return st, err
}

// LoadTokenizer reads and parses DIR/tokenizer.json.
func LoadTokenizer(dir string) (*tokenizer.Tokenizer, error) {
	tok, err := tokenizer.LoadFile(filepath.Join(dir, tokenizerFile))
	if err != nil {
		return nil, firstReadError(dir, err)
	}
	return tok, nil
}

// CodecPath is DIR's codec.pth: the file the reference encoders read and
// the voice library's codec id hashes.
func CodecPath(dir string) string { return filepath.Join(dir, codecFile) }

// ReadModelCodecEncoder reads the encoder of DIR's codec (reference
// recordings to codes).
func ReadModelCodecEncoder(dir string, opt CodecOptions) (*CodecEncoderWeights, error) {
	return ReadCodecEncoderFile(CodecPath(dir), opt)
}

// UsesDemoCodec reports whether dir's codec.pth is the embedded random demo
// codec: such a model speaks no words whatever its other weights.
func UsesDemoCodec(dir string) (bool, error) {
	path := CodecPath(dir)
	f, st, err := regular.Open(path)
	if err != nil {
		return false, err
	}
	f.Close()
	if st.Size() != int64(len(demo.CodecPTH)) {
		return false, nil
	}
	data, err := regular.ReadFile(path, int64(len(demo.CodecPTH)))
	if err != nil {
		return false, err
	}
	return bytes.Equal(data, demo.CodecPTH), nil
}

// MissingFiles lists what dir lacks for a load, by file name: the shards
// its model.safetensors.index.json names (or model.safetensors without an
// index), tokenizer.json and codec.pth. A file that is not regular (a link
// into a Hugging Face cache's blobs/ whose blob is gone, say) counts as
// missing; an index that cannot be read is listed as such.
func MissingFiles(dir string) []string {
	var missing []string
	need := []string{tokenizerFile, codecFile}
	shards, err := checkpoint.IndexShards(dir)
	switch {
	case err == nil:
		need = append(need, shards...)
	case os.IsNotExist(err):
		need = append(need, checkpoint.SafetensorsSingleName)
	default:
		missing = append(missing, checkpoint.SafetensorsIndexName+" (unreadable)")
	}
	for _, f := range need {
		if !regular.Is(filepath.Join(dir, f)) {
			missing = append(missing, f)
		}
	}
	return missing
}
