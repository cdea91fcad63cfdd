package checkpoint

import (
	"fmt"
	"io"
	"math/bits"
	"path/filepath"

	"proscenium/internal/regular"
)

// ReadTorchFile reads every tensor of a torch.save state dict (.pth/.pt/.bin
// in the zip format of PyTorch ≥ 1.6). See ReadTorch.
func ReadTorchFile(path string) (*TensorSet, error) {
	f, st, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTorch(f, st.Size(), filepath.Base(path))
}

// ReadTorch reads every tensor of a torch.save archive of size bytes; name
// labels errors. The pickled object must be a dict (OrderedDict or {}) whose
// values are tensors or parameters; nested dicts are flattened with dotted
// names ("model.layer.weight"), and non-tensor leaves (ints, strings, None,
// lists: epoch counters and the like) are skipped. Tensors come back
// contiguous and little-endian in file order; a contiguous view shares the
// storage's bytes with other views of the same storage, a strided view
// (storage offset, strides) is copied out. Storage types map onto DType
// (FloatStorage→F32, BFloat16Storage→BF16, HalfStorage→F16, LongStorage→I64,
// IntStorage→I32, BoolStorage→BOOL, Float8_e4m3fnStorage→F8_E4M3); any other
// global or opcode is refused by name and nothing in the file is executed.
func ReadTorch(r io.ReaderAt, size int64, name string) (*TensorSet, error) {
	a, err := openTorchArchive(r, size, name)
	if err != nil {
		return nil, err
	}
	pkl, err := a.pickle()
	if err != nil {
		return nil, err
	}
	root, err := unpickle(pkl)
	if err != nil {
		return nil, fmt.Errorf("%s: %sdata.pkl: %w", name, a.prefix, err)
	}
	views, err := stateDictTensors(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m := &torchMaterialiser{archive: a, storages: map[string][]byte{}, copyBudget: size}
	set := NewTensorSet()
	for _, v := range views {
		t, err := m.tensor(v.name, v.t)
		if err != nil {
			return nil, fmt.Errorf("%s: tensor %s: %w", name, v.name, err)
		}
		if err := set.Add(t); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return set, nil
}

type namedView struct {
	name string
	t    *pyTensor
}

// maxDictDepth bounds nesting when flattening.
const maxDictDepth = 32

func stateDictTensors(root any) ([]namedView, error) {
	d, ok := root.(*pyDict)
	if !ok {
		return nil, fmt.Errorf("pickled object is a %s, not a state dict", pyTypeName(root))
	}
	var out []namedView
	// A dict reachable twice (through the memo) would be walked once per
	// path, exponentially often, or forever around a cycle: refused.
	seen := map[*pyDict]string{d: "the top level"}
	var walk func(d *pyDict, prefix string, depth int) error
	walk = func(d *pyDict, prefix string, depth int) error {
		if depth > maxDictDepth {
			return fmt.Errorf("dicts nested deeper than %d at %q", maxDictDepth, prefix)
		}
		for _, k := range d.keys {
			ks, isStr := k.(string)
			switch v := d.vals[k].(type) {
			case *pyTensor:
				if !isStr {
					return fmt.Errorf("tensor under non-string key %v", k)
				}
				out = append(out, namedView{prefix + ks, v})
			case *pyDict:
				if first, ok := seen[v]; ok {
					return fmt.Errorf("one dict appears both at %s and at %q", first, prefix+fmt.Sprint(k))
				}
				seen[v] = fmt.Sprintf("%q", prefix+fmt.Sprint(k))
				if isStr {
					if err := walk(v, prefix+ks+".", depth+1); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return out, walk(d, "", 0)
}

// torchMaterialiser turns storage views into contiguous tensors, loading each
// storage entry once.
type torchMaterialiser struct {
	archive  *torchArchive
	storages map[string][]byte
	// copyBudget bounds the bytes copied out for strided views, so a file
	// cannot make us allocate more than its own size again.
	copyBudget int64
}

func (m *torchMaterialiser) tensor(name string, v *pyTensor) (*Tensor, error) {
	s := v.storage
	es := int64(s.dtype.Size())
	raw, ok := m.storages[s.key]
	if !ok {
		var err error
		if raw, err = m.archive.storage(s.key); err != nil {
			return nil, err
		}
		m.storages[s.key] = raw
	}
	if hi, lo := bits.Mul64(uint64(s.numel), uint64(es)); hi != 0 || lo != uint64(len(raw)) {
		// torch writes exactly numel × element size bytes per storage.
		return nil, fmt.Errorf("storage %s declares %d × %s but its entry holds %d bytes", s.key, s.numel, s.dtype, len(raw))
	}
	shape := make([]int, len(v.shape))
	n := int64(1)
	last := v.offset // highest element index the view touches
	for i, d := range v.shape {
		shape[i] = int(d)
		if hi, lo := bits.Mul64(uint64(n), uint64(d)); hi != 0 || lo > 1<<48 {
			return nil, fmt.Errorf("shape %v is too large", v.shape)
		} else {
			n = int64(lo)
		}
	}
	if n > 0 {
		// Each step keeps last below numel, so the sum cannot overflow.
		for i, d := range v.shape {
			hi, lo := bits.Mul64(uint64(d-1), uint64(v.stride[i]))
			if last < s.numel && (hi != 0 || lo >= uint64(s.numel)) {
				last = s.numel
			} else if last < s.numel {
				last += int64(lo)
			}
		}
		if last >= s.numel {
			return nil, fmt.Errorf("view (offset %d, shape %v, stride %v) reaches past the %d elements of storage %s", v.offset, v.shape, v.stride, s.numel, s.key)
		}
	}
	t := &Tensor{Name: name, DType: s.dtype, Shape: shape}
	if n == 0 {
		t.Data = []byte{}
		return t, nil
	}
	if contiguous(v.shape, v.stride) {
		t.Data = raw[v.offset*es : (v.offset+n)*es : (v.offset+n)*es]
		return t, nil
	}
	if n*es > m.copyBudget {
		return nil, fmt.Errorf("strided view of %d bytes exceeds what the file can hold (%d bytes left)", n*es, m.copyBudget)
	}
	m.copyBudget -= n * es
	t.Data = make([]byte, n*es)
	gatherStrided(t.Data, raw, int(es), v.offset, v.shape, v.stride)
	return t, nil
}

// contiguous reports whether strides are row-major for shape (size-1
// dimensions may carry any stride).
func contiguous(shape, stride []int64) bool {
	want := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && stride[i] != want {
			return false
		}
		want *= shape[i]
	}
	return true
}

// gatherStrided copies the elements of a strided view into dst in row-major
// order. Bounds were checked by the caller.
func gatherStrided(dst, src []byte, es int, offset int64, shape, stride []int64) {
	idx := make([]int64, len(shape))
	pos := offset
	for o := 0; o < len(dst); o += es {
		copy(dst[o:o+es], src[pos*int64(es):])
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			pos += stride[d]
			if idx[d] < shape[d] {
				break
			}
			pos -= stride[d] * shape[d]
			idx[d] = 0
		}
	}
}
