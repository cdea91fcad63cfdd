package checkpoint

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"proscenium/internal/regular"
)

// NumPy .npy files (format versions 1.0, 2.0 and 3.0) holding little-endian
// float32, int64 or int32 arrays in C order. They carry goldens from the
// public reference code and the tensors that the debug drivers write.
//
// Reading is strict: the header must be exactly the dict numpy writes
// ({'descr': …, 'fortran_order': False, 'shape': (…)}), and the data must be
// exactly as long as the shape says. Anything else is refused with an error
// naming the problem; nothing is allocated from a size the file claims.

const (
	npyMagic = "\x93NUMPY"
	// npyMaxHeader bounds the header dict, as numpy's own reader does
	// (max_header_size 10000).
	npyMaxHeader = 10000
	// npyMaxDims bounds the number of dimensions (numpy's limit is 64).
	npyMaxDims = 64
)

// npyDescr maps the element types the project reads to numpy's spelling.
var npyDescr = map[DType]string{F32: "<f4", I64: "<i8", I32: "<i4"}

// ParseNPY decodes an .npy image held in memory. The returned tensor's Data
// aliases b. name labels errors (a file name, say).
func ParseNPY(name string, b []byte) (*Tensor, error) {
	dt, shape, off, err := parseNPYHeader(b)
	if err != nil {
		return nil, fmt.Errorf("npy %s: %w", name, err)
	}
	n, zero := 1, false
	for _, d := range shape {
		zero = zero || d == 0
	}
	for _, d := range shape {
		if zero {
			n = 0
			break
		}
		if n > (len(b)-off)/d {
			return nil, fmt.Errorf("npy %s: shape %v needs more data than the %d bytes after the header", name, shape, len(b)-off)
		}
		n *= d
	}
	if want := n * dt.Size(); len(b)-off != want {
		return nil, fmt.Errorf("npy %s: shape %v of %s needs %d data bytes, the file has %d", name, shape, npyDescr[dt], want, len(b)-off)
	}
	return &Tensor{Name: name, DType: dt, Shape: shape, Data: b[off:]}, nil
}

// MaxNPYFileBytes bounds what ReadNPYFile reads (the debug drivers' codes,
// audio and stage outputs are far smaller).
const MaxNPYFileBytes = 4 << 30

// ReadNPYFile reads and validates one .npy file.
func ReadNPYFile(path string) (*Tensor, error) {
	b, err := regular.ReadFile(path, MaxNPYFileBytes)
	if err != nil {
		return nil, err
	}
	return ParseNPY(path, b)
}

// parseNPYHeader validates the magic, version and header dict and returns the
// element type, the shape and the offset of the data.
func parseNPYHeader(b []byte) (DType, []int, int, error) {
	if len(b) < len(npyMagic)+2 || string(b[:len(npyMagic)]) != npyMagic {
		return "", nil, 0, fmt.Errorf("not an .npy file (bad magic)")
	}
	major, minor := b[6], b[7]
	var hlen, start int
	switch {
	case major == 1 && minor == 0:
		if len(b) < 10 {
			return "", nil, 0, fmt.Errorf("truncated header length")
		}
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	case (major == 2 || major == 3) && minor == 0:
		if len(b) < 12 {
			return "", nil, 0, fmt.Errorf("truncated header length")
		}
		l := binary.LittleEndian.Uint32(b[8:])
		if l > npyMaxHeader {
			return "", nil, 0, fmt.Errorf("header of %d bytes exceeds %d", l, npyMaxHeader)
		}
		hlen, start = int(l), 12
	default:
		return "", nil, 0, fmt.Errorf("unsupported format version %d.%d", major, minor)
	}
	if hlen > npyMaxHeader {
		return "", nil, 0, fmt.Errorf("header of %d bytes exceeds %d", hlen, npyMaxHeader)
	}
	if len(b)-start < hlen {
		return "", nil, 0, fmt.Errorf("header of %d bytes runs past the end of the file (%d bytes)", hlen, len(b))
	}
	h := string(b[start : start+hlen])
	if !strings.HasSuffix(h, "\n") {
		return "", nil, 0, fmt.Errorf("header does not end with a newline")
	}
	dt, shape, err := parseNPYDict(strings.TrimRight(h, " \n"))
	if err != nil {
		return "", nil, 0, fmt.Errorf("header %q: %w", strings.TrimSpace(h), err)
	}
	return dt, shape, start + hlen, nil
}

// parseNPYDict parses the header dict: exactly the keys descr, fortran_order
// and shape, in any order, each once, with an optional trailing comma.
func parseNPYDict(s string) (DType, []int, error) {
	p := &npyLexer{s: s}
	if !p.take("{") {
		return "", nil, fmt.Errorf("expected '{'")
	}
	var (
		dt             DType
		shape          []int
		seen           = map[string]bool{}
		fortran, found bool
	)
	for {
		p.space()
		if p.take("}") {
			break
		}
		key, ok := p.quoted()
		if !ok {
			return "", nil, fmt.Errorf("expected a quoted key at offset %d", p.i)
		}
		if seen[key] {
			return "", nil, fmt.Errorf("key %q appears twice", key)
		}
		seen[key] = true
		p.space()
		if !p.take(":") {
			return "", nil, fmt.Errorf("expected ':' after key %q", key)
		}
		p.space()
		switch key {
		case "descr":
			v, ok := p.quoted()
			if !ok {
				return "", nil, fmt.Errorf("descr is not a string")
			}
			for d, spelling := range npyDescr {
				if spelling == v {
					dt, found = d, true
				}
			}
			if !found {
				return "", nil, fmt.Errorf("element type %q not supported (want <f4, <i8 or <i4)", v)
			}
		case "fortran_order":
			switch {
			case p.take("False"):
			case p.take("True"):
				fortran = true
			default:
				return "", nil, fmt.Errorf("fortran_order is not True or False")
			}
		case "shape":
			var err error
			if shape, err = p.tuple(); err != nil {
				return "", nil, err
			}
		default:
			return "", nil, fmt.Errorf("unexpected key %q", key)
		}
		p.space()
		if p.take(",") {
			continue
		}
		p.space()
		if !p.take("}") {
			return "", nil, fmt.Errorf("expected ',' or '}' at offset %d", p.i)
		}
		break
	}
	if p.i != len(p.s) {
		return "", nil, fmt.Errorf("trailing text after the dict")
	}
	if !seen["descr"] || !seen["fortran_order"] || !seen["shape"] {
		return "", nil, fmt.Errorf("missing key (need descr, fortran_order and shape)")
	}
	if fortran {
		return "", nil, fmt.Errorf("Fortran-order arrays are not supported")
	}
	return dt, shape, nil
}

type npyLexer struct {
	s string
	i int
}

func (p *npyLexer) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *npyLexer) take(tok string) bool {
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

// quoted reads a single- or double-quoted string without escapes.
func (p *npyLexer) quoted() (string, bool) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", false
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", false
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.ContainsAny(v, "\\\n") {
		return "", false
	}
	p.i += end + 2
	return v, true
}

// tuple reads a Python tuple of non-negative integers: (), (n,), (a, b, …).
func (p *npyLexer) tuple() ([]int, error) {
	if !p.take("(") {
		return nil, fmt.Errorf("shape is not a tuple")
	}
	shape := []int{}
	for {
		p.space()
		if p.take(")") {
			if len(shape) == 1 && !strings.HasSuffix(strings.TrimRight(p.s[:p.i-1], " "), ",") {
				return nil, fmt.Errorf("shape (%d) is not a tuple (missing comma)", shape[0])
			}
			return shape, nil
		}
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == p.i || j-p.i > 18 {
			return nil, fmt.Errorf("shape entry at offset %d is not a non-negative integer", p.i)
		}
		d, err := strconv.Atoi(p.s[p.i:j])
		if err != nil {
			return nil, fmt.Errorf("shape entry %q: %v", p.s[p.i:j], err)
		}
		p.i = j
		if len(shape) == npyMaxDims {
			return nil, fmt.Errorf("more than %d dimensions", npyMaxDims)
		}
		shape = append(shape, d)
		p.space()
		if p.take(",") {
			continue
		}
		p.space()
		if p.s[p.i:] == "" || p.s[p.i] != ')' {
			return nil, fmt.Errorf("expected ',' or ')' in shape at offset %d", p.i)
		}
	}
}

// EncodeNPY returns the .npy image (format 1.0, header laid out byte for byte
// as numpy 2 writes it) of a float32, int64 or int32 tensor.
func EncodeNPY(t *Tensor) ([]byte, error) {
	descr, ok := npyDescr[t.DType]
	if !ok {
		return nil, fmt.Errorf("npy %s: element type %s cannot be written (want F32, I64 or I32)", t.Name, t.DType)
	}
	n := 1
	for _, d := range t.Shape {
		if d < 0 {
			return nil, fmt.Errorf("npy %s: negative dimension in shape %v", t.Name, t.Shape)
		}
		n *= d
	}
	if len(t.Data) != n*t.DType.Size() {
		return nil, fmt.Errorf("npy %s: %d bytes for shape %v of %s", t.Name, len(t.Data), t.Shape, t.DType)
	}
	dims := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = strconv.Itoa(d)
	}
	shape := "(" + strings.Join(dims, ", ") + ")"
	if len(dims) == 1 {
		shape = "(" + dims[0] + ",)"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	// numpy leaves room for the first axis to grow to 21 digits in place.
	first := 21
	if len(dims) > 0 {
		first = len(dims[0])
	}
	dict += strings.Repeat(" ", max(0, 21-first))
	total := len(npyMagic) + 4 + len(dict) + 1
	pad := (64 - total%64) % 64
	if len(dict)+pad+1 > math.MaxUint16 {
		return nil, fmt.Errorf("npy %s: header too long", t.Name)
	}
	var buf bytes.Buffer
	buf.Grow(total + pad + len(t.Data))
	buf.WriteString(npyMagic)
	buf.Write([]byte{1, 0})
	_ = binary.Write(&buf, binary.LittleEndian, uint16(len(dict)+pad+1))
	buf.WriteString(dict)
	buf.WriteString(strings.Repeat(" ", pad))
	buf.WriteByte('\n')
	buf.Write(t.Data)
	return buf.Bytes(), nil
}

// WriteNPYFile writes t to path atomically: a temporary file in the same
// directory, synced, then renamed over path. On error nothing is left behind.
func WriteNPYFile(path string, t *Tensor) error {
	b, err := EncodeNPY(t)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Float32Tensor wraps float32 values of the given shape as an F32 tensor.
func Float32Tensor(name string, shape []int, v []float32) *Tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return &Tensor{Name: name, DType: F32, Shape: append([]int(nil), shape...), Data: b}
}

// Int64Tensor wraps int64 values of the given shape as an I64 tensor.
func Int64Tensor(name string, shape []int, v []int64) *Tensor {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return &Tensor{Name: name, DType: I64, Shape: append([]int(nil), shape...), Data: b}
}

// Int32Tensor wraps int32 values of the given shape as an I32 tensor.
func Int32Tensor(name string, shape []int, v []int32) *Tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return &Tensor{Name: name, DType: I32, Shape: append([]int(nil), shape...), Data: b}
}

// TensorInt64s returns the values of an I64 or I32 tensor as int64.
func TensorInt64s(t *Tensor) ([]int64, error) {
	n := t.NumElements()
	if len(t.Data) != n*t.DType.Size() {
		return nil, fmt.Errorf("tensor %s: %d bytes for %d elements of %s", t.Name, len(t.Data), n, t.DType)
	}
	out := make([]int64, n)
	switch t.DType {
	case I64:
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(t.Data[8*i:]))
		}
	case I32:
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(t.Data[4*i:])))
		}
	default:
		return nil, fmt.Errorf("tensor %s: %s is not an integer type", t.Name, t.DType)
	}
	return out, nil
}
