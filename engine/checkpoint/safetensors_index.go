package checkpoint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"proscenium/internal/jsonerr"
	"proscenium/internal/regular"
	"sort"
	"strings"
	"sync"
)

// The file names OpenSafetensors looks for in a directory: the shard map
// Hugging Face writes next to shards, and the one file of an unsharded
// checkpoint.
const (
	SafetensorsIndexName  = "model.safetensors.index.json"
	SafetensorsSingleName = "model.safetensors"
)

// maxIndexJSON bounds model.safetensors.index.json.
const maxIndexJSON = 64 << 20

// Index is the tensor metadata of a safetensors checkpoint, one file or a set
// of shards, read from the headers only. Tensor data is read on demand
// (ReadTensor, ReadTensorInto), concurrently if wanted. Close releases the
// open files.
type Index struct {
	// Files lists the safetensors files, in shard order.
	Files []string
	// Metadata is the __metadata__ of each file, by path (absent when a
	// file has none).
	Metadata map[string]map[string]string

	tensors []TensorInfo // file order, then offset order
	byName  map[string]int

	mu    sync.Mutex
	files map[string]*os.File
}

// OpenSafetensors reads the headers of a checkpoint. path may be a
// .safetensors file, a model.safetensors.index.json, or a directory holding
// either an index (sharded) or model.safetensors or exactly one
// *.safetensors file. Every header is validated (see parseSafetensorsHeader);
// with shards, every tensor of the weight map must be in the shard that the
// map names, and no shard may hold a tensor the map does not list. Errors
// name the file and the tensor.
func OpenSafetensors(path string) (*Index, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		idx := filepath.Join(path, SafetensorsIndexName)
		if _, err := os.Stat(idx); err == nil {
			return openSharded(idx)
		}
		single := filepath.Join(path, SafetensorsSingleName)
		if _, err := os.Stat(single); err == nil {
			return openFiles([]string{single}, nil)
		}
		matches, _ := filepath.Glob(filepath.Join(path, "*.safetensors"))
		switch len(matches) {
		case 1:
			return openFiles(matches, nil)
		case 0:
			return nil, fmt.Errorf("%s: no %s, model.safetensors or other *.safetensors file", path, SafetensorsIndexName)
		}
		return nil, fmt.Errorf("%s: %d .safetensors files but no %s saying how they fit together", path, len(matches), SafetensorsIndexName)
	}
	if strings.HasSuffix(path, ".json") {
		return openSharded(path)
	}
	return openFiles([]string{path}, nil)
}

type shardIndexJSON struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// IndexShards lists the shard files DIR/model.safetensors.index.json
// names, in shard order, without opening them. An error wrapping
// fs.ErrNotExist means DIR has no index.
func IndexShards(dir string) ([]string, error) {
	_, shards, err := readShardIndex(filepath.Join(dir, SafetensorsIndexName))
	return shards, err
}

// readShardIndex reads an index file's weight map and the shard file names
// it names, sorted (model-00001-of-0000N… sorts in shard order); every name
// must be a plain file name in the index's directory.
func readShardIndex(indexPath string) (map[string]string, []string, error) {
	b, err := regular.ReadFile(indexPath, maxIndexJSON)
	if err != nil {
		return nil, nil, err
	}
	return parseShardIndex(b, indexPath)
}

// parseShardIndex is readShardIndex of the index file's bytes.
func parseShardIndex(b []byte, indexPath string) (map[string]string, []string, error) {
	var ij shardIndexJSON
	if err := json.Unmarshal(b, &ij); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", indexPath, jsonerr.Phrase(err))
	}
	if len(ij.WeightMap) == 0 {
		return nil, nil, fmt.Errorf("%s: empty or missing weight_map", indexPath)
	}
	seen := map[string]bool{}
	var shards []string
	names := make([]string, 0, len(ij.WeightMap))
	for n := range ij.WeightMap {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		shard := ij.WeightMap[n]
		if shard == "" || shard != filepath.Base(shard) || shard == "." || shard == ".." || strings.ContainsAny(shard, `/\`) {
			return nil, nil, fmt.Errorf("%s: tensor %s: shard %q is not a plain file name in the index's directory", indexPath, n, shard)
		}
		if !seen[shard] {
			seen[shard] = true
			shards = append(shards, shard)
		}
	}
	sort.Strings(shards)
	return ij.WeightMap, shards, nil
}

func openSharded(indexPath string) (*Index, error) {
	weightMap, shards, err := readShardIndex(indexPath)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(indexPath)
	paths := make([]string, len(shards))
	want := map[string]string{}
	for i, s := range shards {
		paths[i] = filepath.Join(dir, s)
	}
	for n, s := range weightMap {
		want[n] = filepath.Join(dir, s)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s: missing shard %s: %w", indexPath, filepath.Base(p), err)
		}
		if !regular.Is(p) {
			return nil, fmt.Errorf("%s: shard %s: %w", indexPath, filepath.Base(p), regular.ErrNotRegular)
		}
	}
	ix, err := openFiles(paths, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", indexPath, err)
	}
	return ix, nil
}

// openFiles reads the headers of paths. want, when not nil, is the weight
// map (tensor → path) the files must agree with.
func openFiles(paths []string, want map[string]string) (*Index, error) {
	ix := &Index{Files: paths, Metadata: map[string]map[string]string{}, byName: map[string]int{}, files: map[string]*os.File{}}
	for _, p := range paths {
		sf, err := readSafetensorsHeader(p)
		if err != nil {
			return nil, err
		}
		if sf.metadata != nil {
			ix.Metadata[p] = sf.metadata
		}
		for _, t := range sf.tensors {
			if i, dup := ix.byName[t.Name]; dup {
				return nil, fmt.Errorf("tensor %s is in both %s and %s", t.Name, ix.tensors[i].File, p)
			}
			if want != nil {
				w, listed := want[t.Name]
				if !listed {
					return nil, fmt.Errorf("%s: tensor %s is not in the weight map", p, t.Name)
				}
				if w != p {
					return nil, fmt.Errorf("%s: tensor %s: the weight map puts it in %s", p, t.Name, filepath.Base(w))
				}
			}
			ix.byName[t.Name] = len(ix.tensors)
			ix.tensors = append(ix.tensors, t)
		}
	}
	for n, w := range want {
		if _, ok := ix.byName[n]; !ok {
			return nil, fmt.Errorf("%s: tensor %s of the weight map is missing", filepath.Base(w), n)
		}
	}
	return ix, nil
}

// Tensors lists every tensor in file-offset order (shard by shard). The slice
// is the index's own: do not modify it.
func (ix *Index) Tensors() []TensorInfo { return ix.tensors }

// Len is the number of tensors.
func (ix *Index) Len() int { return len(ix.tensors) }

// Lookup returns the metadata of one tensor.
func (ix *Index) Lookup(name string) (TensorInfo, bool) {
	i, ok := ix.byName[name]
	if !ok {
		return TensorInfo{}, false
	}
	return ix.tensors[i], true
}

// TotalBytes is the sum of all tensors' data sizes.
func (ix *Index) TotalBytes() int64 {
	var n int64
	for _, t := range ix.tensors {
		n += t.Size
	}
	return n
}

func (ix *Index) file(path string) (*os.File, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if f := ix.files[path]; f != nil {
		return f, nil
	}
	f, _, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	ix.files[path] = f
	return f, nil
}

// ReadTensorInto reads the data of ti into dst, which must be exactly
// ti.Size bytes.
func (ix *Index) ReadTensorInto(ti TensorInfo, dst []byte) error {
	if int64(len(dst)) != ti.Size {
		return fmt.Errorf("%s: tensor %s: buffer of %d bytes for %d", ti.File, ti.Name, len(dst), ti.Size)
	}
	f, err := ix.file(ti.File)
	if err != nil {
		return err
	}
	if _, err := f.ReadAt(dst, ti.Offset); err != nil {
		return fmt.Errorf("%s: tensor %s: %w (file changed since its header was read?)", ti.File, ti.Name, err)
	}
	return nil
}

// ReadTensor reads one tensor's data into a new Tensor.
func (ix *Index) ReadTensor(name string) (*Tensor, error) {
	ti, ok := ix.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("no tensor %s in %s", name, strings.Join(ix.Files, ", "))
	}
	t := &Tensor{Name: ti.Name, DType: ti.DType, Shape: append([]int{}, ti.Shape...), Data: make([]byte, ti.Size)}
	return t, ix.ReadTensorInto(ti, t.Data)
}

// ReadAll reads every tensor into memory, in file-offset order.
func (ix *Index) ReadAll() (*TensorSet, error) {
	set := NewTensorSet()
	for _, ti := range ix.tensors {
		t, err := ix.ReadTensor(ti.Name)
		if err != nil {
			return nil, err
		}
		if err := set.Add(t); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// Close closes the files opened for reading.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var first error
	for p, f := range ix.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
		delete(ix.files, p)
	}
	return first
}
