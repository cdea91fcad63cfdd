package checkpoint

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// A restricted pickle virtual machine: it knows the opcodes (protocols 2–5,
// binary forms only) and the handful of globals that a torch state dict uses,
// and refuses everything else by name. Nothing in the file is executed: the
// known globals map onto Go values built here (an ordered dict, a tensor
// reference, a storage reference); any other global is an error at the
// GLOBAL opcode, before anything could call it.

// Values on the pickle stack.
type (
	pyTuple   []any
	pyList    struct{ items []any }
	pyMark    struct{}
	pyGlobal  string // "module.name" of an allowed global
	pyStorage struct {
		key   string
		dtype DType
		numel int64
	}
	// pyTensor is what _rebuild_tensor_v2 / _rebuild_parameter yield: a view
	// of a storage, materialised later by the caller.
	pyTensor struct {
		storage *pyStorage
		offset  int64
		shape   []int64
		stride  []int64
	}
	// pyStorageType is a torch.<X>Storage global; it names the element type.
	pyStorageType struct {
		name  string
		dtype DType
	}
)

// pyDict is an insertion-ordered dict (collections.OrderedDict or {}). Keys
// are kept in first-insertion order; only str, int and bool keys are
// hashable here.
type pyDict struct {
	keys  []any
	vals  map[any]any
	index map[any]int
}

func newPyDict() *pyDict { return &pyDict{vals: map[any]any{}, index: map[any]int{}} }

func (d *pyDict) set(k, v any) error {
	switch k.(type) {
	case string, int64, bool:
	default:
		return fmt.Errorf("unhashable dict key of type %s", pyTypeName(k))
	}
	if _, ok := d.index[k]; !ok {
		d.index[k] = len(d.keys)
		d.keys = append(d.keys, k)
	}
	d.vals[k] = v
	return nil
}

// The globals a state dict may name. Storage types map to element types;
// torch storage types without a DType here (DoubleStorage, ByteStorage, …)
// are refused by name when they are used.
var pickleStorageTypes = map[string]DType{
	"FloatStorage":         F32,
	"BFloat16Storage":      BF16,
	"HalfStorage":          F16,
	"LongStorage":          I64,
	"IntStorage":           I32,
	"BoolStorage":          Bool,
	"Float8_e4m3fnStorage": F8E4M3,
}

var pickleFunctions = map[string]bool{
	"collections.OrderedDict":                    true,
	"torch._utils._rebuild_tensor_v2":            true,
	"torch._utils._rebuild_parameter":            true,
	"torch._utils._rebuild_parameter_with_state": true,
}

func resolveGlobal(module, name string) (any, error) {
	full := module + "." + name
	if pickleFunctions[full] {
		return pyGlobal(full), nil
	}
	if module == "torch" {
		if dt, ok := pickleStorageTypes[name]; ok {
			return &pyStorageType{name: full, dtype: dt}, nil
		}
	}
	return nil, fmt.Errorf("refusing global %s", full)
}

// Opcode names for error messages (including opcodes we refuse).
var pickleOpNames = map[byte]string{
	'(': "MARK", '.': "STOP", '0': "POP", '1': "POP_MARK", '2': "DUP", 'F': "FLOAT", 'I': "INT",
	'J': "BININT", 'K': "BININT1", 'L': "LONG", 'M': "BININT2", 'N': "NONE", 'P': "PERSID",
	'Q': "BINPERSID", 'R': "REDUCE", 'S': "STRING", 'T': "BINSTRING", 'U': "SHORT_BINSTRING",
	'V': "UNICODE", 'X': "BINUNICODE", 'a': "APPEND", 'b': "BUILD", 'c': "GLOBAL", 'd': "DICT",
	'}': "EMPTY_DICT", 'e': "APPENDS", 'g': "GET", 'h': "BINGET", 'i': "INST", 'j': "LONG_BINGET",
	'l': "LIST", ']': "EMPTY_LIST", 'o': "OBJ", 'p': "PUT", 'q': "BINPUT", 'r': "LONG_BINPUT",
	's': "SETITEM", 't': "TUPLE", ')': "EMPTY_TUPLE", 'u': "SETITEMS", 'G': "BINFLOAT",
	0x80: "PROTO", 0x81: "NEWOBJ", 0x82: "EXT1", 0x83: "EXT2", 0x84: "EXT4", 0x85: "TUPLE1",
	0x86: "TUPLE2", 0x87: "TUPLE3", 0x88: "NEWTRUE", 0x89: "NEWFALSE", 0x8a: "LONG1", 0x8b: "LONG4",
	'B': "BINBYTES", 'C': "SHORT_BINBYTES", 0x8c: "SHORT_BINUNICODE", 0x8d: "BINUNICODE8",
	0x8e: "BINBYTES8", 0x8f: "EMPTY_SET", 0x90: "ADDITEMS", 0x91: "FROZENSET", 0x92: "NEWOBJ_EX",
	0x93: "STACK_GLOBAL", 0x94: "MEMOIZE", 0x95: "FRAME", 0x96: "BYTEARRAY8", 0x97: "NEXT_BUFFER",
	0x98: "READONLY_BUFFER",
}

func pyTypeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case pyTuple:
		return "tuple"
	case *pyList:
		return "list"
	case *pyDict:
		return "dict"
	case pyMark:
		return "mark"
	case pyGlobal:
		return string(v)
	case *pyStorageType:
		return v.name
	case *pyStorage:
		return "storage"
	case *pyTensor:
		return "tensor"
	}
	return fmt.Sprintf("%T", v)
}

// maxPickleMemo bounds the memo table (entries, not bytes).
const maxPickleMemo = 1 << 24

// unpickler runs one pickle. persistentLoad resolves BINPERSID storage ids.
type unpickler struct {
	data  []byte
	pos   int
	stack []any
	marks []int
	memo  map[uint32]any
	// storages already seen by key: a key names one storage, whatever the
	// number of tensors viewing it.
	storages map[string]*pyStorage
}

// unpickle runs data and returns the object STOP leaves on the stack.
func unpickle(data []byte) (any, error) {
	u := &unpickler{data: data, memo: map[uint32]any{}, storages: map[string]*pyStorage{}}
	return u.run()
}

func (u *unpickler) errorf(op byte, at int, format string, args ...any) error {
	name := pickleOpNames[op]
	if name == "" {
		name = "?"
	}
	return fmt.Errorf("pickle opcode %s (0x%02x) at offset %d: %s", name, op, at, fmt.Sprintf(format, args...))
}

func (u *unpickler) take(n int) ([]byte, bool) {
	if n < 0 || n > len(u.data)-u.pos {
		return nil, false
	}
	b := u.data[u.pos : u.pos+n]
	u.pos += n
	return b, true
}

func (u *unpickler) line() (string, bool) {
	i := strings.IndexByte(string(u.data[u.pos:min(len(u.data), u.pos+256)]), '\n')
	if i < 0 {
		return "", false
	}
	s := string(u.data[u.pos : u.pos+i])
	u.pos += i + 1
	return s, true
}

func (u *unpickler) push(v any) { u.stack = append(u.stack, v) }

func (u *unpickler) pop() (any, bool) {
	floor := 0
	if len(u.marks) > 0 {
		floor = u.marks[len(u.marks)-1]
	}
	if len(u.stack) <= floor {
		return nil, false
	}
	v := u.stack[len(u.stack)-1]
	u.stack = u.stack[:len(u.stack)-1]
	return v, true
}

func (u *unpickler) top() (any, bool) {
	floor := 0
	if len(u.marks) > 0 {
		floor = u.marks[len(u.marks)-1]
	}
	if len(u.stack) <= floor {
		return nil, false
	}
	return u.stack[len(u.stack)-1], true
}

// popMark returns the items above the last MARK and removes them and the mark.
func (u *unpickler) popMark() ([]any, bool) {
	if len(u.marks) == 0 {
		return nil, false
	}
	m := u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	items := append([]any(nil), u.stack[m:]...)
	u.stack = u.stack[:m]
	return items, true
}

func (u *unpickler) memoPut(idx uint32) bool {
	v, ok := u.top()
	if !ok {
		return false
	}
	if _, exists := u.memo[idx]; !exists && len(u.memo) >= maxPickleMemo {
		return false
	}
	u.memo[idx] = v
	return true
}

func (u *unpickler) run() (any, error) {
	for {
		at := u.pos
		if u.pos >= len(u.data) {
			return nil, fmt.Errorf("pickle truncated at offset %d: no STOP opcode", at)
		}
		op := u.data[u.pos]
		u.pos++
		short := func() error { return u.errorf(op, at, "truncated argument") }
		underflow := func() error { return u.errorf(op, at, "stack underflow") }
		switch op {
		case 0x80: // PROTO
			b, ok := u.take(1)
			if !ok {
				return nil, short()
			}
			if b[0] < 2 || b[0] > 5 {
				return nil, u.errorf(op, at, "protocol %d not supported (2–5)", b[0])
			}
		case 0x95: // FRAME: framing is a hint for buffered readers; the data is in memory.
			if _, ok := u.take(8); !ok {
				return nil, short()
			}
		case '.': // STOP
			v, ok := u.pop()
			if !ok {
				return nil, underflow()
			}
			return v, nil
		case '(':
			u.marks = append(u.marks, len(u.stack))
		case '0': // POP
			if _, ok := u.pop(); !ok {
				return nil, underflow()
			}
		case '1': // POP_MARK
			if _, ok := u.popMark(); !ok {
				return nil, u.errorf(op, at, "no MARK")
			}
		case 'N':
			u.push(nil)
		case 0x88:
			u.push(true)
		case 0x89:
			u.push(false)
		case 'J':
			b, ok := u.take(4)
			if !ok {
				return nil, short()
			}
			u.push(int64(int32(binary.LittleEndian.Uint32(b))))
		case 'K':
			b, ok := u.take(1)
			if !ok {
				return nil, short()
			}
			u.push(int64(b[0]))
		case 'M':
			b, ok := u.take(2)
			if !ok {
				return nil, short()
			}
			u.push(int64(binary.LittleEndian.Uint16(b)))
		case 0x8a: // LONG1: little-endian two's complement, at most 8 bytes here
			n, ok := u.take(1)
			if !ok {
				return nil, short()
			}
			if n[0] > 8 {
				return nil, u.errorf(op, at, "%d-byte integer does not fit in int64", n[0])
			}
			b, ok := u.take(int(n[0]))
			if !ok {
				return nil, short()
			}
			var v uint64
			for i := len(b) - 1; i >= 0; i-- {
				v = v<<8 | uint64(b[i])
			}
			if len(b) > 0 && len(b) < 8 && b[len(b)-1]&0x80 != 0 {
				v |= ^uint64(0) << (8 * len(b)) // sign-extend
			}
			u.push(int64(v))
		case 'G': // BINFLOAT, big-endian
			b, ok := u.take(8)
			if !ok {
				return nil, short()
			}
			u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
		case 'X', 0x8c, 0x8d, 'T', 'U': // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8, BINSTRING, SHORT_BINSTRING
			var n uint64
			switch op {
			case 'X', 'T':
				b, ok := u.take(4)
				if !ok {
					return nil, short()
				}
				n = uint64(binary.LittleEndian.Uint32(b))
				if op == 'T' && int32(n) < 0 {
					return nil, u.errorf(op, at, "negative length")
				}
			case 0x8c, 'U':
				b, ok := u.take(1)
				if !ok {
					return nil, short()
				}
				n = uint64(b[0])
			case 0x8d:
				b, ok := u.take(8)
				if !ok {
					return nil, short()
				}
				n = binary.LittleEndian.Uint64(b)
			}
			if n > uint64(len(u.data)-u.pos) {
				return nil, u.errorf(op, at, "string of %d bytes runs past the end of the pickle", n)
			}
			b, _ := u.take(int(n))
			u.push(string(b))
		case ')':
			u.push(pyTuple{})
		case 't':
			items, ok := u.popMark()
			if !ok {
				return nil, u.errorf(op, at, "no MARK")
			}
			u.push(pyTuple(items))
		case 0x85, 0x86, 0x87:
			n := int(op-0x85) + 1
			items := make(pyTuple, n)
			for i := n - 1; i >= 0; i-- {
				v, ok := u.pop()
				if !ok {
					return nil, underflow()
				}
				items[i] = v
			}
			u.push(items)
		case ']':
			u.push(&pyList{})
		case 'l':
			items, ok := u.popMark()
			if !ok {
				return nil, u.errorf(op, at, "no MARK")
			}
			u.push(&pyList{items: items})
		case 'a', 'e': // APPEND, APPENDS
			var items []any
			if op == 'a' {
				v, ok := u.pop()
				if !ok {
					return nil, underflow()
				}
				items = []any{v}
			} else {
				var ok bool
				if items, ok = u.popMark(); !ok {
					return nil, u.errorf(op, at, "no MARK")
				}
			}
			t, ok := u.top()
			if !ok {
				return nil, underflow()
			}
			l, isList := t.(*pyList)
			if !isList {
				return nil, u.errorf(op, at, "append to %s", pyTypeName(t))
			}
			l.items = append(l.items, items...)
		case '}':
			u.push(newPyDict())
		case 'd', 's', 'u': // DICT, SETITEM, SETITEMS
			var items []any
			if op == 's' {
				v, ok1 := u.pop()
				k, ok2 := u.pop()
				if !ok1 || !ok2 {
					return nil, underflow()
				}
				items = []any{k, v}
			} else {
				var ok bool
				if items, ok = u.popMark(); !ok {
					return nil, u.errorf(op, at, "no MARK")
				}
			}
			if len(items)%2 != 0 {
				return nil, u.errorf(op, at, "odd number of key/value items")
			}
			var d *pyDict
			if op == 'd' {
				d = newPyDict()
				u.push(d)
			} else {
				t, ok := u.top()
				if !ok {
					return nil, underflow()
				}
				var isDict bool
				if d, isDict = t.(*pyDict); !isDict {
					return nil, u.errorf(op, at, "set item on %s", pyTypeName(t))
				}
			}
			for i := 0; i < len(items); i += 2 {
				if err := d.set(items[i], items[i+1]); err != nil {
					return nil, u.errorf(op, at, "%v", err)
				}
			}
		case 'q', 'r', 0x94: // BINPUT, LONG_BINPUT, MEMOIZE
			var idx uint32
			switch op {
			case 'q':
				b, ok := u.take(1)
				if !ok {
					return nil, short()
				}
				idx = uint32(b[0])
			case 'r':
				b, ok := u.take(4)
				if !ok {
					return nil, short()
				}
				idx = binary.LittleEndian.Uint32(b)
			default:
				idx = uint32(len(u.memo))
			}
			if !u.memoPut(idx) {
				return nil, u.errorf(op, at, "empty stack or memo full")
			}
		case 'h', 'j': // BINGET, LONG_BINGET
			var idx uint32
			if op == 'h' {
				b, ok := u.take(1)
				if !ok {
					return nil, short()
				}
				idx = uint32(b[0])
			} else {
				b, ok := u.take(4)
				if !ok {
					return nil, short()
				}
				idx = binary.LittleEndian.Uint32(b)
			}
			v, ok := u.memo[idx]
			if !ok {
				return nil, u.errorf(op, at, "memo index %d not set", idx)
			}
			u.push(v)
		case 'c': // GLOBAL "module\nname\n"
			mod, ok1 := u.line()
			name, ok2 := u.line()
			if !ok1 || !ok2 {
				return nil, short()
			}
			g, err := resolveGlobal(mod, name)
			if err != nil {
				return nil, u.errorf(op, at, "%v", err)
			}
			u.push(g)
		case 0x93: // STACK_GLOBAL
			nv, ok1 := u.pop()
			mv, ok2 := u.pop()
			if !ok1 || !ok2 {
				return nil, underflow()
			}
			mod, ok1 := mv.(string)
			name, ok2 := nv.(string)
			if !ok1 || !ok2 {
				return nil, u.errorf(op, at, "module and name must be str")
			}
			g, err := resolveGlobal(mod, name)
			if err != nil {
				return nil, u.errorf(op, at, "%v", err)
			}
			u.push(g)
		case 'Q': // BINPERSID
			pid, ok := u.pop()
			if !ok {
				return nil, underflow()
			}
			s, err := u.persistentStorage(pid)
			if err != nil {
				return nil, u.errorf(op, at, "%v", err)
			}
			u.push(s)
		case 'R': // REDUCE
			args, ok1 := u.pop()
			fn, ok2 := u.pop()
			if !ok1 || !ok2 {
				return nil, underflow()
			}
			tuple, isTuple := args.(pyTuple)
			if !isTuple {
				return nil, u.errorf(op, at, "arguments are a %s, not a tuple", pyTypeName(args))
			}
			v, err := u.call(fn, tuple)
			if err != nil {
				return nil, u.errorf(op, at, "%v", err)
			}
			u.push(v)
		case 'b': // BUILD
			state, ok := u.pop()
			if !ok {
				return nil, underflow()
			}
			obj, ok := u.top()
			if !ok {
				return nil, underflow()
			}
			// OrderedDict state dicts carry a _metadata attribute (module
			// versions); tensors may carry Python attributes. Neither
			// changes tensor data, so the state is dropped.
			switch obj.(type) {
			case *pyDict, *pyTensor:
			default:
				return nil, u.errorf(op, at, "BUILD on %s (state %s)", pyTypeName(obj), pyTypeName(state))
			}
		default:
			return nil, u.errorf(op, at, "unsupported opcode")
		}
	}
}

// persistentStorage turns ('storage', storage_type, key, location, numel)
// into a storage reference.
func (u *unpickler) persistentStorage(pid any) (*pyStorage, error) {
	t, ok := pid.(pyTuple)
	if !ok || len(t) != 5 {
		return nil, fmt.Errorf("persistent id is a %s, want ('storage', type, key, location, numel)", pyTypeName(pid))
	}
	if tag, _ := t[0].(string); tag != "storage" {
		return nil, fmt.Errorf("persistent id tag %v, want 'storage'", t[0])
	}
	st, ok := t[1].(*pyStorageType)
	if !ok {
		return nil, fmt.Errorf("persistent id storage type is %s", pyTypeName(t[1]))
	}
	key, ok := t[2].(string)
	if !ok || key == "" || strings.ContainsAny(key, "/\\") {
		return nil, fmt.Errorf("persistent id storage key %v is not a plain name", t[2])
	}
	numel, ok := t[4].(int64)
	if !ok || numel < 0 {
		return nil, fmt.Errorf("storage %s: element count %v", key, t[4])
	}
	if s, seen := u.storages[key]; seen {
		if s.dtype != st.dtype || s.numel != numel {
			return nil, fmt.Errorf("storage %s: declared again as %d × %s (was %d × %s)", key, numel, st.dtype, s.numel, s.dtype)
		}
		return s, nil
	}
	s := &pyStorage{key: key, dtype: st.dtype, numel: numel}
	u.storages[key] = s
	return s, nil
}

// call applies one of the allowed globals.
func (u *unpickler) call(fn any, args pyTuple) (any, error) {
	g, ok := fn.(pyGlobal)
	if !ok {
		return nil, fmt.Errorf("cannot call %s", pyTypeName(fn))
	}
	switch g {
	case "collections.OrderedDict":
		d := newPyDict()
		if len(args) == 0 {
			return d, nil
		}
		return nil, fmt.Errorf("%s with %d arguments", g, len(args))
	case "torch._utils._rebuild_tensor_v2":
		// (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
		if len(args) != 6 && len(args) != 7 {
			return nil, fmt.Errorf("%s with %d arguments, want 6 or 7", g, len(args))
		}
		s, ok := args[0].(*pyStorage)
		if !ok {
			return nil, fmt.Errorf("%s: storage argument is a %s", g, pyTypeName(args[0]))
		}
		off, ok := args[1].(int64)
		if !ok || off < 0 {
			return nil, fmt.Errorf("%s: storage offset %v", g, args[1])
		}
		shape, err := intTuple(args[2])
		if err != nil {
			return nil, fmt.Errorf("%s: size: %v", g, err)
		}
		stride, err := intTuple(args[3])
		if err != nil {
			return nil, fmt.Errorf("%s: stride: %v", g, err)
		}
		if len(shape) != len(stride) {
			return nil, fmt.Errorf("%s: %d sizes but %d strides", g, len(shape), len(stride))
		}
		return &pyTensor{storage: s, offset: off, shape: shape, stride: stride}, nil
	case "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state":
		// (data, requires_grad, backward_hooks[, state])
		if len(args) < 3 || len(args) > 4 {
			return nil, fmt.Errorf("%s with %d arguments", g, len(args))
		}
		t, ok := args[0].(*pyTensor)
		if !ok {
			return nil, fmt.Errorf("%s: data argument is a %s", g, pyTypeName(args[0]))
		}
		return t, nil
	}
	return nil, fmt.Errorf("cannot call %s", g)
}

func intTuple(v any) ([]int64, error) {
	t, ok := v.(pyTuple)
	if !ok {
		return nil, fmt.Errorf("%s, want a tuple of ints", pyTypeName(v))
	}
	out := make([]int64, len(t))
	for i, e := range t {
		n, ok := e.(int64)
		if !ok || n < 0 {
			return nil, fmt.Errorf("element %d is %v, want a non-negative int", i, e)
		}
		out[i] = n
	}
	return out, nil
}
