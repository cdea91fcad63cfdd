package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sort"

	"proscenium/internal/jsonerr"
	"proscenium/internal/regular"
)

// Safetensors layout: an 8-byte little-endian header length N, N bytes of
// JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, …,
// "__metadata__": {str: str}}, then the data; offsets are relative to the
// first byte after the header.

// MaxSafetensorsHeader bounds the JSON header (the Rust crate allows 100 MB).
const MaxSafetensorsHeader = 100 << 20

// TensorInfo describes one tensor of a safetensors file without its data.
type TensorInfo struct {
	Name   string
	DType  DType
	Shape  []int
	File   string // path of the file holding the data
	Offset int64  // absolute offset of the first data byte in File
	Size   int64  // data bytes = product(Shape) × DType.Size()
}

// NumElements is the product of the shape (1 for a scalar).
func (ti TensorInfo) NumElements() int {
	n := 1
	for _, d := range ti.Shape {
		n *= d
	}
	return n
}

// safetensorsFile is one parsed header.
type safetensorsFile struct {
	path     string
	size     int64
	dataOff  int64 // 8 + N
	tensors  []TensorInfo
	metadata map[string]string
}

type headerEntry struct {
	DType       string   `json:"dtype"`
	Shape       []int64  `json:"shape"`
	DataOffsets []uint64 `json:"data_offsets"`
}

// readSafetensorsHeader parses and validates the header of the file at path.
func readSafetensorsHeader(path string) (*safetensorsFile, error) {
	f, st, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseSafetensorsHeader(f, st.Size(), path)
}

// parseSafetensorsHeader validates a header the way the Rust crate does:
// size within limits and the file, known dtypes, byte sizes that match the
// shapes, and data ranges that tile the data section exactly (no gaps, no
// overlaps, nothing past the end). Errors name the file and the tensor.
func parseSafetensorsHeader(r io.ReaderAt, size int64, path string) (*safetensorsFile, error) {
	var lenBuf [8]byte
	if size < 8 {
		return nil, fmt.Errorf("%s: %d bytes: too short for a safetensors header", path, size)
	}
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("%s: reading header length: %w", path, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	// The length is the file's first bytes: the errors do not print it (a
	// shard symlinked to another file must not show that file's bytes).
	if n > MaxSafetensorsHeader {
		return nil, fmt.Errorf("%s: not a safetensors file: its header length is over the %d-byte limit", path, MaxSafetensorsHeader)
	}
	if n > uint64(size-8) {
		return nil, fmt.Errorf("%s: not a safetensors file, or truncated: its header length runs past the end of the file (%d bytes)", path, size)
	}
	hdr := make([]byte, n)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, fmt.Errorf("%s: reading header: %w", path, err)
	}
	sf := &safetensorsFile{path: path, size: size, dataOff: 8 + int64(n)}
	if err := sf.parseJSON(hdr); err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, jsonerr.Phrase(err))
	}
	if err := sf.checkLayout(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sf, nil
}

func (sf *safetensorsFile) parseJSON(hdr []byte) error {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name := tok.(string) // keys of an object are always strings
		if seen[name] {
			return fmt.Errorf("key %q appears twice", name)
		}
		seen[name] = true
		if name == "__metadata__" {
			if err := dec.Decode(&sf.metadata); err != nil {
				return fmt.Errorf("__metadata__ must map strings to strings: %w", err)
			}
			continue
		}
		var e headerEntry
		if err := dec.Decode(&e); err != nil {
			return fmt.Errorf("tensor %s: %w", name, err)
		}
		ti, err := sf.entryInfo(name, e)
		if err != nil {
			return fmt.Errorf("tensor %s: %w", name, err)
		}
		sf.tensors = append(sf.tensors, ti)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return err
	}
	// Only the space padding may follow the object.
	if len(bytes.TrimRight(hdr[dec.InputOffset():], " \t\r\n")) != 0 {
		return errors.New("trailing bytes after the JSON object")
	}
	return nil
}

func (sf *safetensorsFile) entryInfo(name string, e headerEntry) (TensorInfo, error) {
	dt := DType(e.DType)
	if !dt.Known() {
		return TensorInfo{}, fmt.Errorf("unsupported dtype %q", e.DType)
	}
	if len(e.DataOffsets) != 2 {
		return TensorInfo{}, fmt.Errorf("data_offsets has %d entries, want 2", len(e.DataOffsets))
	}
	begin, end := e.DataOffsets[0], e.DataOffsets[1]
	if end < begin {
		return TensorInfo{}, fmt.Errorf("data_offsets [%d, %d] end before they begin", begin, end)
	}
	data := uint64(sf.size - sf.dataOff)
	if end > data {
		return TensorInfo{}, fmt.Errorf("data_offsets [%d, %d] run past the end of the data (%d bytes)", begin, end, data)
	}
	shape := make([]int, len(e.Shape))
	bytesWant := uint64(dt.Size())
	for i, d := range e.Shape {
		if d < 0 {
			return TensorInfo{}, fmt.Errorf("negative dimension in shape %v", e.Shape)
		}
		hi, lo := bits.Mul64(bytesWant, uint64(d))
		if hi != 0 {
			return TensorInfo{}, fmt.Errorf("shape %v of %s has more bytes than fit in 64 bits", e.Shape, dt)
		}
		bytesWant = lo
		shape[i] = int(d)
	}
	if bytesWant != end-begin {
		return TensorInfo{}, fmt.Errorf("shape %v of %s needs %d bytes but data_offsets [%d, %d] hold %d", e.Shape, dt, bytesWant, begin, end, end-begin)
	}
	return TensorInfo{Name: name, DType: dt, Shape: shape, File: sf.path, Offset: sf.dataOff + int64(begin), Size: int64(end - begin)}, nil
}

// checkLayout sorts the tensors by offset and requires them to tile the data
// section: each begins where the previous ended and the last ends at the
// end of the file.
func (sf *safetensorsFile) checkLayout() error {
	sort.SliceStable(sf.tensors, func(i, j int) bool {
		a, b := sf.tensors[i], sf.tensors[j]
		if a.Offset != b.Offset {
			return a.Offset < b.Offset
		}
		return a.Size < b.Size // empty tensors first at a shared offset
	})
	at := sf.dataOff
	prev := "the header"
	for _, t := range sf.tensors {
		switch {
		case t.Offset < at:
			return fmt.Errorf("tensor %s: data at [%d, %d) overlaps %s", t.Name, t.Offset-sf.dataOff, t.Offset-sf.dataOff+t.Size, prev)
		case t.Offset > at:
			return fmt.Errorf("tensor %s: data at [%d, %d) leaves a gap of %d bytes after %s", t.Name, t.Offset-sf.dataOff, t.Offset-sf.dataOff+t.Size, t.Offset-at, prev)
		}
		at += t.Size
		prev = "tensor " + t.Name
	}
	if at != sf.size {
		return fmt.Errorf("%d bytes after the last tensor's data (%s) are not described by the header", sf.size-at, prev)
	}
	return nil
}
