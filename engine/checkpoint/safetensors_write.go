package checkpoint

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// safetensorsOrder is the Rust crate's dtype order; tensors are written by
// descending order, then by name, so that wider types come first and every
// tensor's data stays aligned to its element size.
var safetensorsOrder = map[DType]int{Bool: 0, F8E4M3: 4, F16: 7, BF16: 8, I32: 9, F32: 11, I64: 13}

// encodeSafetensorsHeader returns the header bytes (length prefix and JSON
// padded with spaces to a multiple of 8, as the Rust crate pads) for tensors
// already in data order, and the data size. JSON keys are sorted, so equal
// input gives equal bytes (the Rust crate lists tensors in data order
// instead; no reader depends on the key order).
// With streamed, Data is not there: each tensor's size is its shape's.
func encodeSafetensorsHeader(tensors []*Tensor, metadata map[string]string, streamed bool) ([]byte, int64, error) {
	type entry struct {
		DType       DType    `json:"dtype"`
		Shape       []int    `json:"shape"`
		DataOffsets [2]int64 `json:"data_offsets"`
	}
	hdr := map[string]any{}
	if len(metadata) > 0 {
		hdr["__metadata__"] = metadata
	}
	var off int64
	for _, t := range tensors {
		if t.Name == "" || t.Name == "__metadata__" {
			return nil, 0, fmt.Errorf("tensor name %q is not allowed", t.Name)
		}
		if _, dup := hdr[t.Name]; dup {
			return nil, 0, fmt.Errorf("duplicate tensor %s", t.Name)
		}
		if !t.DType.Known() {
			return nil, 0, fmt.Errorf("tensor %s: unsupported dtype %q", t.Name, t.DType)
		}
		for _, d := range t.Shape {
			if d < 0 {
				return nil, 0, fmt.Errorf("tensor %s: negative dimension in %v", t.Name, t.Shape)
			}
		}
		size := tensorBytes(t)
		if !streamed && int64(len(t.Data)) != size {
			return nil, 0, fmt.Errorf("tensor %s: %d bytes for shape %v of %s", t.Name, len(t.Data), t.Shape, t.DType)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		hdr[t.Name] = entry{t.DType, shape, [2]int64{off, off + size}}
		off += size
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return nil, 0, err
	}
	pad := (8 - len(js)%8) % 8
	out := make([]byte, 8, 8+len(js)+pad)
	binary.LittleEndian.PutUint64(out, uint64(len(js)+pad))
	out = append(out, js...)
	for range pad {
		out = append(out, ' ')
	}
	return out, off, nil
}

// sortForSafetensors returns tensors in the order they are written.
func sortForSafetensors(tensors []*Tensor) []*Tensor {
	s := append([]*Tensor(nil), tensors...)
	sort.SliceStable(s, func(i, j int) bool {
		a, b := safetensorsOrder[s[i].DType], safetensorsOrder[s[j].DType]
		if a != b {
			return a > b
		}
		return s[i].Name < s[j].Name
	})
	return s
}

// WriteSafetensors writes tensors (any order; Data is not modified) and
// optional metadata as one safetensors file, atomically: a temporary file
// in the same directory is synced and renamed over path. The same input
// always gives the same bytes.
func WriteSafetensors(path string, tensors []*Tensor, metadata map[string]string) error {
	sorted := sortForSafetensors(tensors)
	hdr, _, err := encodeSafetensorsHeader(sorted, metadata, false)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeFileAtomic(path, func(w *bufio.Writer) error {
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		for _, t := range sorted {
			if _, err := w.Write(t.Data); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteSafetensorsSharded writes tensors into dir as
// model-0000i-of-0000N.safetensors shards of at most maxShardBytes of data
// each (a larger tensor gets a shard of its own), then
// model.safetensors.index.json ({"metadata": {"total_size": …},
// "weight_map": {…}}) last, each file atomically. It returns the shard file
// names.
func WriteSafetensorsSharded(dir string, tensors []*Tensor, metadata map[string]string, maxShardBytes int64) ([]string, error) {
	return writeSharded(dir, tensors, false, func(t *Tensor, w io.Writer) error { _, err := w.Write(t.Data); return err },
		metadata, maxShardBytes, 1)
}

// TensorFill writes one tensor's bytes (its shape's elements in its dtype)
// to w: the data of a streamed shard.
type TensorFill func(t *Tensor, w io.Writer) error

// WriteSafetensorsStreamed is WriteSafetensorsSharded for tensors whose
// Data is not held (nil): fill writes each tensor's bytes as its shard is
// written, workers shards at a time. Checkpoints larger than memory (the
// full-size synthetic one) are written so.
func WriteSafetensorsStreamed(dir string, tensors []*Tensor, fill TensorFill, metadata map[string]string, maxShardBytes int64, workers int) ([]string, error) {
	return writeSharded(dir, tensors, true, fill, metadata, maxShardBytes, max(workers, 1))
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// tensorBytes is a tensor's data size by its shape.
func tensorBytes(t *Tensor) int64 { return int64(t.NumElements()) * int64(t.DType.Size()) }

func writeSharded(dir string, tensors []*Tensor, streamed bool, fill TensorFill, metadata map[string]string, maxShardBytes int64, workers int) ([]string, error) {
	sorted := sortForSafetensors(tensors)
	if _, _, err := encodeSafetensorsHeader(sorted, nil, streamed); err != nil { // validate everything before writing anything
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	var shards [][]*Tensor
	var cur []*Tensor
	var curBytes, total int64
	for _, t := range sorted {
		n := tensorBytes(t)
		if len(cur) > 0 && curBytes+n > maxShardBytes {
			shards = append(shards, cur)
			cur, curBytes = nil, 0
		}
		cur = append(cur, t)
		curBytes += n
		total += n
	}
	if len(cur) > 0 || len(shards) == 0 {
		shards = append(shards, cur)
	}
	weightMap := map[string]string{}
	names := make([]string, len(shards))
	for i, s := range shards {
		names[i] = fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, len(shards))
		for _, t := range s {
			weightMap[t.Name] = names[i]
		}
	}
	errs := make([]error, len(shards))
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, s := range shards {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			hdr, _, err := encodeSafetensorsHeader(s, metadata, streamed)
			if err == nil {
				err = writeFileAtomic(filepath.Join(dir, names[i]), func(w *bufio.Writer) error {
					if _, err := w.Write(hdr); err != nil {
						return err
					}
					for _, t := range s {
						cw := &countWriter{w: w}
						if err := fill(t, cw); err != nil {
							return fmt.Errorf("tensor %s: %w", t.Name, err)
						}
						if cw.n != tensorBytes(t) {
							return fmt.Errorf("tensor %s: %d bytes written for shape %v of %s", t.Name, cw.n, t.Shape, t.DType)
						}
					}
					return nil
				})
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	idx, err := json.MarshalIndent(map[string]any{
		"metadata":   map[string]int64{"total_size": total},
		"weight_map": weightMap,
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	idx = append(idx, '\n')
	err = writeFileAtomic(filepath.Join(dir, SafetensorsIndexName), func(w *bufio.Writer) error {
		_, err := w.Write(idx)
		return err
	})
	return names, err
}

// writeFileAtomic writes path through a synced temporary file in the same
// directory and a rename, so readers see the old file or the new one.
func writeFileAtomic(path string, write func(*bufio.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err = write(w); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
