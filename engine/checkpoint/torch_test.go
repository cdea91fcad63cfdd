package checkpoint

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// torchRef is one row of testdata/torch/*.ref.json, written by make_refs.py
// with CPython's pickle and zipfile.
type torchRef struct {
	Name   string `json:"name"`
	DType  DType  `json:"dtype"`
	Shape  []int  `json:"shape"`
	SHA256 string `json:"sha256"`
	Hex    string `json:"hex"`
}

func loadTorchRefs(t *testing.T, path string) []torchRef {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var refs []torchRef
	if err := json.Unmarshal(b, &refs); err != nil {
		t.Fatal(err)
	}
	return refs
}

// codecPth finds the codec fixtures: tiny-w128 is embedded by engine/demo;
// tiny-w8 is the codec engineer's test copy, or the shared oracle.
func codecPth(t *testing.T, geometry string) string {
	t.Helper()
	candidates := map[string][]string{
		"tiny-w128": {"../demo/codec.pth"},
		"tiny-w8":   {"../cpu/testdata/codec/tiny-w8/codec.pth", "/work/shared/oracle/codec/tiny-w8/codec.pth"},
	}[geometry]
	for _, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("no %s codec.pth in %v", geometry, candidates)
	}
	t.Skipf("no %s codec.pth in %v", geometry, candidates)
	return ""
}

func TestReadTorchCodecFixtures(t *testing.T) {
	for _, c := range []struct {
		geometry string
		keys     int
	}{{"tiny-w128", 400}, {"tiny-w8", 390}} {
		t.Run(c.geometry, func(t *testing.T) {
			set, err := ReadTorchFile(codecPth(t, c.geometry))
			if err != nil {
				t.Fatal(err)
			}
			refs := loadTorchRefs(t, filepath.Join("testdata/torch", c.geometry+".ref.json"))
			if set.Len() != c.keys || len(refs) != c.keys {
				t.Fatalf("read %d tensors, reference has %d, want %d", set.Len(), len(refs), c.keys)
			}
			names := set.Names()
			for i, r := range refs {
				if names[i] != r.Name {
					t.Fatalf("tensor %d is %q, reference order says %q", i, names[i], r.Name)
				}
				tn := set.Get(r.Name)
				if tn.DType != r.DType || !reflect.DeepEqual(tn.Shape, r.Shape) {
					t.Errorf("%s: %s %v, want %s %v", r.Name, tn.DType, tn.Shape, r.DType, r.Shape)
				}
				if len(tn.Data) != tn.NumElements()*tn.DType.Size() {
					t.Errorf("%s: %d bytes for shape %v", r.Name, len(tn.Data), tn.Shape)
				}
				if sum := sha256.Sum256(tn.Data); hex.EncodeToString(sum[:]) != r.SHA256 {
					t.Errorf("%s: data sha256 differs from the CPython reference", r.Name)
				}
			}
			// Hand checks: codebooks 4096×8 / 1024×8 (MODEL.md), weight-norm g [out,1,1], the first conv 1→8 channels with kernel 7.
			hand := map[string][]int{
				"quantizer.semantic_quantizer.quantizers.0.codebook.weight":   {4096, 8},
				"quantizer.quantizer.quantizers.0.codebook.weight":            {1024, 8},
				"quantizer.semantic_quantizer.quantizers.0.out_proj.weight_g": {128, 1, 1},
				"quantizer.semantic_quantizer.quantizers.0.out_proj.weight_v": {128, 8, 1},
				"encoder.block.0.conv.parametrizations.weight.original0":      {8, 1, 1},
				"encoder.block.0.conv.parametrizations.weight.original1":      {8, 1, 7},
			}
			if c.geometry == "tiny-w128" { // the one transformer layer of the last encoder block
				hand["encoder.block.4.block.5.norm.weight"] = []int{128}
			}
			for name, shape := range hand {
				tn := set.Get(name)
				if tn == nil {
					t.Errorf("missing %s", name)
				} else if !reflect.DeepEqual(tn.Shape, shape) || tn.DType != F32 {
					t.Errorf("%s: %s %v, want F32 %v", name, tn.DType, tn.Shape, shape)
				}
			}
			// Both weight-norm spellings are present.
			var g, orig0 int
			for _, n := range names {
				g += btoi(strings.HasSuffix(n, ".weight_g"))
				orig0 += btoi(strings.HasSuffix(n, ".parametrizations.weight.original0"))
			}
			if g == 0 || orig0 == 0 {
				t.Errorf("weight_g: %d, original0: %d; want both spellings", g, orig0)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestReadTorchViewsAndDTypes(t *testing.T) {
	set, err := ReadTorchFile("testdata/torch/views.pth")
	if err != nil {
		t.Fatal(err)
	}
	refs := loadTorchRefs(t, "testdata/torch/views.ref.json")
	if !reflect.DeepEqual(set.Names(), namesOf(refs)) {
		t.Fatalf("names %v, want %v (the non-tensor 'epoch' skipped)", set.Names(), namesOf(refs))
	}
	for _, r := range refs {
		tn := set.Get(r.Name)
		if tn.DType != r.DType || !reflect.DeepEqual(tn.Shape, r.Shape) && !(len(r.Shape) == 0 && len(tn.Shape) == 0) {
			t.Errorf("%s: %s %v, want %s %v", r.Name, tn.DType, tn.Shape, r.DType, r.Shape)
		}
		if got := hex.EncodeToString(tn.Data); got != r.Hex {
			t.Errorf("%s: data %s, want %s", r.Name, got, r.Hex)
		}
	}
	// A hand check of the transposed view: element [1][0] of the .t() of a
	// [6,4] matrix of i+0.5 is element [0][1] of the original: 1.5.
	f, _ := set.Get("transposed").Float32s()
	if f[6] != 1.5 || f[1] != 4.5 {
		t.Errorf("transposed[1][0]=%v want 1.5, [0][1]=%v want 4.5", f[6], f[1])
	}
}

func namesOf(refs []torchRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Name)
	}
	return out
}

// pickleBuilder writes protocol-2 pickles for the bad-input tests.
type pickleBuilder struct{ bytes.Buffer }

func (p *pickleBuilder) op(b ...byte) *pickleBuilder { p.Write(b); return p }
func (p *pickleBuilder) global(mod, name string) *pickleBuilder {
	p.WriteString("c" + mod + "\n" + name + "\n")
	return p
}
func (p *pickleBuilder) str(s string) *pickleBuilder {
	p.WriteByte('X')
	binary.Write(&p.Buffer, binary.LittleEndian, uint32(len(s)))
	p.WriteString(s)
	return p
}
func (p *pickleBuilder) int(v int) *pickleBuilder {
	p.WriteByte('J')
	binary.Write(&p.Buffer, binary.LittleEndian, int32(v))
	return p
}
func (p *pickleBuilder) tuple(vs ...int) *pickleBuilder {
	p.op('(')
	for _, v := range vs {
		p.int(v)
	}
	return p.op('t')
}

// tensorPickle is {name: _rebuild_tensor_v2(storage(typ, key, numel), off, shape, stride, False, OrderedDict())}.
func tensorPickle(typ, key string, numel, off int, shape, stride []int) []byte {
	p := &pickleBuilder{}
	p.op(0x80, 2).global("collections", "OrderedDict").op(')', 'R')
	p.str("w").global("torch._utils", "_rebuild_tensor_v2").op('(')
	p.op('(').str("storage").global("torch", typ).str(key).str("cpu").int(numel).op('t', 'Q')
	p.int(off).tuple(shape...).tuple(stride...).op(0x89).global("collections", "OrderedDict").op(')', 'R', 't', 'R')
	p.op('s', '.')
	return p.Bytes()
}

type zipEntry struct {
	name   string
	data   []byte
	method uint16
}

func torchZip(t testing.TB, entries ...zipEntry) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		f, err := w.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(e.data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadTorchBadInput(t *testing.T) {
	good := tensorPickle("FloatStorage", "0", 4, 0, []int{2, 2}, []int{2, 1})
	data16 := make([]byte, 16)
	valid := torchZip(t, zipEntry{"a/data.pkl", good, zip.Store}, zipEntry{"a/data/0", data16, zip.Store})
	if set, err := ReadTorch(bytes.NewReader(valid), int64(len(valid)), "ok.pth"); err != nil || set.Len() != 1 {
		t.Fatalf("the valid base case fails: %v", err)
	}
	evil := (&pickleBuilder{}).op(0x80, 2).global("os", "system").str("echo hi").op(0x85, 'R', '.').Bytes()
	bomb := bytes.Repeat([]byte{0}, 1<<20)
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"truncated", valid[:len(valid)/2], "bad.pth: not a torch zip archive"},
		{"empty", nil, "bad.pth: not a torch zip archive"},
		{"no data.pkl", torchZip(t, zipEntry{"a/data/0", data16, zip.Store}), "no <archive>/data.pkl"},
		{"global os.system", torchZip(t, zipEntry{"a/data.pkl", evil, zip.Store}), "refusing global os.system"},
		{"builtins eval via STACK_GLOBAL", torchZip(t, zipEntry{"a/data.pkl", (&pickleBuilder{}).op(0x80, 4).str("builtins").str("eval").op(0x93, '.').Bytes(), zip.Store}), "refusing global builtins.eval"},
		{"unsupported storage type", torchZip(t, zipEntry{"a/data.pkl", tensorPickle("DoubleStorage", "0", 2, 0, []int{2}, []int{1}), zip.Store}, zipEntry{"a/data/0", data16, zip.Store}), "refusing global torch.DoubleStorage"},
		{"unknown opcode", torchZip(t, zipEntry{"a/data.pkl", []byte{0x80, 2, 'i', 'x', '\n'}, zip.Store}), "opcode INST (0x69) at offset 2"},
		{"opcode byte 0xff", torchZip(t, zipEntry{"a/data.pkl", []byte{0x80, 2, 0xff}, zip.Store}), "opcode ? (0xff) at offset 2"},
		{"truncated pickle", torchZip(t, zipEntry{"a/data.pkl", good[:len(good)-9], zip.Store}, zipEntry{"a/data/0", data16, zip.Store}), "bad.pth: a/data.pkl: pickle"},
		{"huge string length", torchZip(t, zipEntry{"a/data.pkl", []byte{0x80, 2, 'X', 0xff, 0xff, 0xff, 0x7f, 'a'}, zip.Store}), "string of 2147483647 bytes runs past the end"},
		{"missing storage", torchZip(t, zipEntry{"a/data.pkl", good, zip.Store}), "tensor w: bad.pth: storage \"0\": no entry a/data/0"},
		{"storage shorter than declared", torchZip(t, zipEntry{"a/data.pkl", good, zip.Store}, zipEntry{"a/data/0", data16[:12], zip.Store}), "storage 0 declares 4 × F32 but its entry holds 12 bytes"},
		{"huge declared numel", torchZip(t, zipEntry{"a/data.pkl", tensorPickle("FloatStorage", "0", 1<<31-1, 0, []int{2, 2}, []int{2, 1}), zip.Store}, zipEntry{"a/data/0", data16, zip.Store}), "declares 2147483647 × F32 but its entry holds 16 bytes"},
		{"view past storage", torchZip(t, zipEntry{"a/data.pkl", tensorPickle("FloatStorage", "0", 4, 1, []int{2, 2}, []int{2, 1}), zip.Store}, zipEntry{"a/data/0", data16, zip.Store}), "tensor w: view (offset 1, shape [2 2], stride [2 1]) reaches past the 4 elements of storage 0"},
		{"huge shape", torchZip(t, zipEntry{"a/data.pkl", tensorPickle("FloatStorage", "0", 4, 0, []int{1 << 30, 1 << 30}, []int{0, 0}), zip.Store}, zipEntry{"a/data/0", data16, zip.Store}), "tensor w: shape [1073741824 1073741824] is too large"},
		{"broadcast view larger than file", torchZip(t, zipEntry{"a/data.pkl", tensorPickle("FloatStorage", "0", 4, 0, []int{1 << 20, 4}, []int{0, 1}), zip.Store}, zipEntry{"a/data/0", data16, zip.Store}), "strided view of 16777216 bytes exceeds"},
		{"compressed storage (zip bomb)", torchZip(t, zipEntry{"a/data.pkl", tensorPickle("FloatStorage", "0", 1<<18, 0, []int{1 << 18}, []int{1}), zip.Store}, zipEntry{"a/data/0", bomb, zip.Deflate}), "entry a/data/0 is compressed (method 8)"},
		{"big-endian", torchZip(t, zipEntry{"a/data.pkl", good, zip.Store}, zipEntry{"a/byteorder", []byte("big"), zip.Store}), "byteorder \"big\""},
		{"not a dict", torchZip(t, zipEntry{"a/data.pkl", []byte{0x80, 2, 'K', 1, '.'}, zip.Store}), "pickled object is a int, not a state dict"},
		{"memo get unset", torchZip(t, zipEntry{"a/data.pkl", []byte{0x80, 2, 'h', 9, '.'}, zip.Store}), "memo index 9 not set"},
		{"dict shared under many keys", torchZip(t, zipEntry{"a/data.pkl", selfSharingDicts(), zip.Store}), `one dict appears both at "` + strings.Repeat("a.", 29) + `a" and at "` + strings.Repeat("a.", 29) + `b"`},
		{"stack underflow", torchZip(t, zipEntry{"a/data.pkl", []byte{0x80, 2, 's', '.'}, zip.Store}), "SETITEM (0x73) at offset 2: stack underflow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadTorch(bytes.NewReader(c.file), int64(len(c.file)), "bad.pth")
			if err == nil {
				t.Fatalf("no error, want one containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.pth") {
				t.Fatalf("error %q, want it to name bad.pth and contain %q", err, c.want)
			}
		})
	}
}

func TestReadTorchCRCMismatch(t *testing.T) {
	good := tensorPickle("FloatStorage", "0", 4, 0, []int{4}, []int{1})
	file := torchZip(t, zipEntry{"a/data.pkl", good, zip.Store}, zipEntry{"a/data/0", []byte("0123456789abcdef"), zip.Store})
	i := bytes.Index(file, []byte("0123456789abcdef"))
	file[i] ^= 1
	_, err := ReadTorch(bytes.NewReader(file), int64(len(file)), "crc.pth")
	if err == nil || !strings.Contains(err.Error(), "crc.pth: entry a/data/0: CRC-32 mismatch") {
		t.Fatalf("error %v, want a CRC-32 mismatch naming the entry", err)
	}
}

// selfSharingDicts pickles d0 = {}, d_i = {"a": d_(i-1), "b": d_(i-1)} for
// 30 levels: 2^30 paths to the innermost dict.
func selfSharingDicts() []byte {
	p := &pickleBuilder{}
	p.op(0x80, 2, '}', 'q', 0)
	for i := 1; i <= 30; i++ {
		p.op('}', '(').str("a").op('h', byte(i-1)).str("b").op('h', byte(i-1)).op('u', 'q', byte(i))
	}
	return p.op('.').Bytes()
}

// Every proper prefix of a valid archive is refused with an error naming
// the file.
func TestReadTorchEveryTruncation(t *testing.T) {
	b, err := os.ReadFile("testdata/torch/views.pth")
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n++ {
		if _, err := ReadTorch(bytes.NewReader(b[:n]), int64(n), "cut.pth"); err == nil || !strings.Contains(err.Error(), "cut.pth") {
			t.Fatalf("prefix of %d/%d bytes: error %v", n, len(b), err)
		}
	}
}

// A central directory that declares a 4 GiB storage in a 300-byte file is
// refused before anything of that size is allocated.
func TestReadTorchLyingEntrySize(t *testing.T) {
	good := tensorPickle("FloatStorage", "0", 4, 0, []int{4}, []int{1})
	file := torchZip(t, zipEntry{"a/data.pkl", good, zip.Store}, zipEntry{"a/data/0", make([]byte, 16), zip.Store})
	// Central directory record of a/data/0: signature PK\1\2, sizes at +20 and +24.
	i := bytes.LastIndex(file, []byte("PK\x01\x02"))
	if i < 0 || !bytes.Contains(file[i:], []byte("a/data/0")) {
		t.Fatal("central directory record not found")
	}
	binary.LittleEndian.PutUint32(file[i+20:], 0xfffffff0)
	binary.LittleEndian.PutUint32(file[i+24:], 0xfffffff0)
	_, err := ReadTorch(bytes.NewReader(file), int64(len(file)), "lie.pth")
	if err == nil || !strings.Contains(err.Error(), "lie.pth: entry a/data/0: 4294967280 bytes at offset") {
		t.Fatalf("error %v, want the entry's declared size refused", err)
	}
}
