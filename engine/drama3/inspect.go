package drama3

import (
	"fmt"
	"path/filepath"
	"strings"

	"proscenium/internal/regular"
)

// This file is the inspection of a checkpoint directory that `proscenium
// inspect` prints and the studio shows before loading.

// DTypeStats is what the stored tensors of one dtype amount to.
type DTypeStats struct {
	Tensors  int   `json:"tensors"`
	Elements int64 `json:"elements"`
	Bytes    int64 `json:"bytes"`
}

// ParameterReport is CountParameters for reports.
type ParameterReport struct {
	Text  int64 `json:"text"`
	Audio int64 `json:"audio"`
	Total int64 `json:"total"`
}

// Inspection is what a checkpoint directory holds, read from config.json and
// the safetensors headers without loading weights.
type Inspection struct {
	Dir            string                 `json:"dir"`
	Config         *Config                `json:"config,omitempty"`
	Demo           bool                   `json:"demo"` // the codec is the random demo codec: speaks no words
	BackbonePrefix string                 `json:"backbone_prefix"`
	AudioPrefix    string                 `json:"audio_prefix"`
	Parameters     *ParameterReport       `json:"parameters,omitempty"`
	Files          []string               `json:"files,omitempty"`
	Stored         map[string]*DTypeStats `json:"stored_by_dtype,omitempty"`
	StoredBytes    int64                  `json:"stored_bytes"`
	Memory         *Memory                `json:"memory,omitempty"`
	MemoryBasis    string                 `json:"memory_basis,omitempty"`
	Unplaced       []string               `json:"unplaced"`
	Missing        []string               `json:"missing"` // tensors, and "file NAME" for a missing tokenizer or codec
	Problems       []string               `json:"problems"`
	Error          string                 `json:"error,omitempty"`
}

// Inspect reports whatever it can read of dir, with the memory estimate for
// context rows of caches. The error (also in Error) names the file or
// tensor that keeps dir from loading; unplaced tensors alone are listed, not
// an error.
func Inspect(dir string, context int) (*Inspection, error) {
	rep := &Inspection{Dir: dir, Unplaced: []string{}, Missing: []string{}, Problems: []string{}}
	err := rep.fill(context)
	if err != nil {
		rep.Error = err.Error()
	}
	return rep, err
}

func (rep *Inspection) fill(context int) error {
	dir := rep.Dir
	rep.Demo, _ = UsesDemoCodec(dir)
	cfg, err := LoadConfig(dir)
	if err != nil {
		return err
	}
	rep.Config = cfg
	pc := CountParameters(cfg)
	rep.Parameters = &ParameterReport{pc.Text, pc.Audio, pc.Total()}
	ck, err := Open(dir)
	if err != nil {
		// The geometry alone still gives an estimate, at the standard storage.
		m := EstimateMemory(cfg, StoredWeightBytes(cfg), context)
		rep.Memory, rep.MemoryBasis = &m, "geometry (no readable weights)"
		return err
	}
	defer ck.Close()
	w := ck.Weights
	rep.BackbonePrefix, rep.AudioPrefix = w.BackbonePrefix, w.AudioPrefix
	rep.Files = ck.Index.Files
	rep.Stored = map[string]*DTypeStats{}
	for _, ti := range ck.Index.Tensors() {
		s := rep.Stored[string(ti.DType)]
		if s == nil {
			s = &DTypeStats{}
			rep.Stored[string(ti.DType)] = s
		}
		s.Tensors++
		s.Elements += int64(ti.NumElements())
		s.Bytes += ti.Size
		rep.StoredBytes += ti.Size
	}
	m := EstimateMemory(cfg, w.StoredBytes(), context)
	rep.Memory, rep.MemoryBasis = &m, "placed tensors as stored"
	rep.Unplaced = append(rep.Unplaced, ck.Report.Unplaced...)
	rep.Missing = append(rep.Missing, ck.Report.Missing...)
	rep.Problems = append(rep.Problems, ck.Report.Problems...)
	// The engine also needs the tokenizer and the codec next to the weights.
	var missingFiles []string
	for _, f := range []string{tokenizerFile, codecFile} {
		if !regular.Is(filepath.Join(dir, f)) {
			missingFiles = append(missingFiles, f)
			rep.Missing = append(rep.Missing, "file "+f)
		}
	}
	if err := ck.Report.Err(); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if len(missingFiles) > 0 {
		return fmt.Errorf("%s: missing %s", dir, strings.Join(missingFiles, " and "))
	}
	return nil
}
