package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The Python binding's test_in_memory (huggingface/safetensors,
// bindings/python/tests) pins the bytes of {"test": zeros(2,2) float32}:
// spaces pad the header to a multiple of 8.
func TestWriteSafetensorsMatchesRustCrate(t *testing.T) {
	want := []byte("@\x00\x00\x00\x00\x00\x00\x00{\"test\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}    " +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	path := filepath.Join(t.TempDir(), "a.safetensors")
	if err := WriteSafetensors(path, []*Tensor{{Name: "test", DType: F32, Shape: []int{2, 2}, Data: make([]byte, 16)}}, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

// sampleTensors holds one tensor of every dtype, with odd sizes so that
// alignment matters.
func sampleTensors() []*Tensor {
	seq := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + 3)
		}
		return b
	}
	return []*Tensor{
		{Name: "z.bool", DType: Bool, Shape: []int{3}, Data: []byte{1, 0, 1}},
		{Name: "a.f32", DType: F32, Shape: []int{2, 3}, Data: seq(24)},
		{Name: "m.bf16", DType: BF16, Shape: []int{5}, Data: seq(10)},
		{Name: "m.f16", DType: F16, Shape: []int{1, 3}, Data: seq(6)},
		{Name: "w.fp8", DType: F8E4M3, Shape: []int{1, 5}, Data: seq(5)},
		{Name: "i.i64", DType: I64, Shape: []int{2}, Data: seq(16)},
		{Name: "i.i32", DType: I32, Shape: []int{}, Data: seq(4)},
		{Name: "e.empty", DType: F32, Shape: []int{0, 4}, Data: []byte{}},
	}
}

func TestSafetensorsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := sampleTensors()
	path := filepath.Join(dir, "model.safetensors")
	meta := map[string]string{"format": "pt", "note": "<&>"}
	if err := WriteSafetensors(path, in, meta); err != nil {
		t.Fatal(err)
	}
	// Same input in another order: the same bytes.
	rev := append([]*Tensor(nil), in...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	path2 := filepath.Join(dir, "again.safetensors")
	if err := WriteSafetensors(path2, rev, meta); err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(path)
	b2, _ := os.ReadFile(path2)
	if !bytes.Equal(b1, b2) {
		t.Fatal("writer output depends on input order")
	}
	if n := binary.LittleEndian.Uint64(b1); n%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", n)
	}
	ix, err := OpenSafetensors(dir + "/model.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if !reflect.DeepEqual(ix.Metadata[path], meta) {
		t.Errorf("metadata %v, want %v", ix.Metadata[path], meta)
	}
	// File order: widest dtype first (I64, F32, I32, BF16, F16, F8, BOOL), then by name;
	// every tensor aligned to its element size.
	var order []string
	prevEnd := int64(-1)
	for _, ti := range ix.Tensors() {
		order = append(order, ti.Name)
		if ti.Offset%int64(ti.DType.Size()) != 0 {
			t.Errorf("%s at offset %d is not aligned to %d", ti.Name, ti.Offset, ti.DType.Size())
		}
		if prevEnd >= 0 && ti.Offset != prevEnd {
			t.Errorf("%s at %d, previous ended at %d", ti.Name, ti.Offset, prevEnd)
		}
		prevEnd = ti.Offset + ti.Size
	}
	wantOrder := []string{"i.i64", "a.f32", "e.empty", "i.i32", "m.bf16", "m.f16", "w.fp8", "z.bool"}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("file order %v, want %v", order, wantOrder)
	}
	for _, want := range in {
		got, err := ix.ReadTensor(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if got.DType != want.DType || !reflect.DeepEqual(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("%s: got %s %v %x, want %s %v %x", want.Name, got.DType, got.Shape, got.Data, want.DType, want.Shape, want.Data)
		}
	}
	// Opening the directory finds model.safetensors.
	os.Remove(path2)
	ix2, err := OpenSafetensors(dir)
	if err != nil || ix2.Len() != len(in) {
		t.Fatalf("open dir: %v", err)
	}
	ix2.Close()
}

func TestSafetensorsSharded(t *testing.T) {
	dir := t.TempDir()
	in := sampleTensors()
	names, err := WriteSafetensorsSharded(dir, in, nil, 20)
	if err != nil {
		t.Fatal(err)
	}
	// Data order i64(16) f32(24) empty(0) i32(4) bf16(10) f16(6) fp8(5) bool(3) in shards of ≤ 20 bytes
	// (a larger tensor alone): [i64] [f32 empty] [i32 bf16 f16] [fp8 bool].
	if len(names) != 4 || names[0] != "model-00001-of-00004.safetensors" {
		t.Fatalf("shards %v", names)
	}
	ix, err := OpenSafetensors(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if len(ix.Files) != 4 || ix.Len() != len(in) || ix.TotalBytes() != 68 {
		t.Fatalf("%d files, %d tensors, %d bytes", len(ix.Files), ix.Len(), ix.TotalBytes())
	}
	if ti, _ := ix.Lookup("m.f16"); filepath.Base(ti.File) != "model-00003-of-00004.safetensors" {
		t.Errorf("m.f16 in %s", ti.File)
	}
	set, err := ix.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range in {
		if got := set.Get(want.Name); got == nil || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("%s differs after sharding", want.Name)
		}
	}
	var idx struct {
		Metadata  map[string]int64  `json:"metadata"`
		WeightMap map[string]string `json:"weight_map"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, SafetensorsIndexName))
	if err := json.Unmarshal(b, &idx); err != nil || idx.Metadata["total_size"] != 68 || len(idx.WeightMap) != len(in) {
		t.Errorf("index.json %s (%v)", b, err)
	}
}

func TestReadDequantFP8(t *testing.T) {
	// A 3×5 weight in 2-blocks: scale table [2][3].
	w := make([]byte, 15)
	for i := range w {
		w[i] = 0x38 // 1.0
	}
	w[14] = 0x40 // 2.0
	scale := Float32Tensor("x.weight_scale_inv", []int{2, 3}, []float32{1, 2, 3, 4, 5, 0.5})
	dir := t.TempDir()
	if err := WriteSafetensors(filepath.Join(dir, "model.safetensors"), []*Tensor{
		{Name: "x.weight", DType: F8E4M3, Shape: []int{3, 5}, Data: w}, scale,
	}, nil); err != nil {
		t.Fatal(err)
	}
	ix, err := OpenSafetensors(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if s, ok := ix.FP8Scale("x.weight"); !ok || s.Name != "x.weight_scale_inv" {
		t.Fatalf("scale pairing: %v %v", s, ok)
	}
	got, err := ix.ReadDequantFP8("x.weight", 2)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := got.Float32s()
	want := []float32{1, 1, 2, 2, 3, 1, 1, 2, 2, 3, 4, 4, 5, 5, 1}
	if !reflect.DeepEqual(v, want) || !reflect.DeepEqual(got.Shape, []int{3, 5}) {
		t.Errorf("dequantised %v %v, want %v", got.Shape, v, want)
	}
	if _, err := ix.ReadDequantFP8("x.weight", 4); err == nil || !strings.Contains(err.Error(), "scale shape [2 3], want [1 2]") {
		t.Errorf("wrong block size: %v", err)
	}
}

// rawSafetensors builds a file from a literal header and n data bytes.
func rawSafetensors(header string, n int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, make([]byte, n)...)
}

func TestSafetensorsBadHeaders(t *testing.T) {
	valid := rawSafetensors(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]}}`, 12)
	huge := binary.LittleEndian.AppendUint64(nil, math.MaxUint64)
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"short file", []byte{1, 2, 3}, "too short"},
		{"truncated data", valid[:len(valid)-1], "tensor b: data_offsets [8, 12] run past the end of the data (11 bytes)"},
		{"truncated header", valid[:20], "header length runs past the end of the file (20 bytes)"},
		{"huge header length", append(huge, '{', '}'), "header length is over the 104857600-byte limit"},
		{"unknown dtype", rawSafetensors(`{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, 8), `tensor a: unsupported dtype "F64"`},
		{"size mismatch", rawSafetensors(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8), "tensor a: shape [3] of F32 needs 12 bytes but data_offsets [0, 8] hold 8"},
		{"huge shape", rawSafetensors(`{"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}}`, 8), "tensor a: shape [4611686018427387904 4] of F32 has more bytes than fit in 64 bits"},
		{"negative dim", rawSafetensors(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, 8), "tensor a: negative dimension"},
		{"offsets past end", rawSafetensors(`{"a":{"dtype":"I64","shape":[1],"data_offsets":[1000000000,1000000008]}}`, 8), "tensor a: data_offsets [1000000000, 1000000008] run past the end"},
		{"reversed offsets", rawSafetensors(`{"a":{"dtype":"I64","shape":[0],"data_offsets":[8,0]}}`, 8), "tensor a: data_offsets [8, 0] end before they begin"},
		{"overlap", rawSafetensors(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), "tensor b: data at [4, 8) overlaps tensor a"},
		{"gap", rawSafetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, 12), "tensor b: data at [8, 12) leaves a gap of 4 bytes after tensor a"},
		{"undescribed tail", rawSafetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 8), "4 bytes after the last tensor's data (tensor a)"},
		{"duplicate key", rawSafetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4), `key "a" appears twice`},
		{"not json", rawSafetensors(`hello`, 0), "header: not a JSON object"},
		{"trailing bytes", rawSafetensors(`{}x`, 0), "trailing bytes"},
		{"bad metadata", rawSafetensors(`{"__metadata__":{"a":1}}`, 0), "__metadata__ must map strings to strings"},
		{"offsets not a pair", rawSafetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}}`, 4), "tensor a: data_offsets has 1 entries"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.safetensors")
			if err := os.WriteFile(path, c.file, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := OpenSafetensors(path)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.safetensors") {
				t.Fatalf("error %v, want one naming bad.safetensors and containing %q", err, c.want)
			}
		})
	}
	path := filepath.Join(dir, "ok.safetensors")
	os.WriteFile(path, valid, 0o644)
	if ix, err := OpenSafetensors(path); err != nil || ix.Len() != 2 {
		t.Fatalf("the valid base case fails: %v", err)
	}
}

func TestSafetensorsBadShards(t *testing.T) {
	write := func(t *testing.T, dir string, weightMap map[string]string) {
		b, _ := json.Marshal(map[string]any{"weight_map": weightMap})
		os.WriteFile(filepath.Join(dir, SafetensorsIndexName), b, 0o644)
	}
	shard := func(t *testing.T, dir, name string, tensors ...string) {
		var ts []*Tensor
		for _, n := range tensors {
			ts = append(ts, &Tensor{Name: n, DType: F32, Shape: []int{1}, Data: make([]byte, 4)})
		}
		if err := WriteSafetensors(filepath.Join(dir, name), ts, nil); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name      string
		weightMap map[string]string
		shards    map[string][]string
		want      string
	}{
		{"missing shard", map[string]string{"a": "s1.safetensors", "b": "s2.safetensors"}, map[string][]string{"s1.safetensors": {"a"}}, "missing shard s2.safetensors"},
		{"tensor missing from its shard", map[string]string{"a": "s1.safetensors", "b": "s1.safetensors"}, map[string][]string{"s1.safetensors": {"a"}}, "s1.safetensors: tensor b of the weight map is missing"},
		{"unlisted tensor", map[string]string{"a": "s1.safetensors"}, map[string][]string{"s1.safetensors": {"a", "c"}}, "s1.safetensors: tensor c is not in the weight map"},
		{"wrong shard", map[string]string{"a": "s1.safetensors", "b": "s2.safetensors"}, map[string][]string{"s1.safetensors": {"a", "b"}, "s2.safetensors": {}}, "tensor b: the weight map puts it in s2.safetensors"},
		{"path traversal", map[string]string{"a": "../s1.safetensors"}, nil, `tensor a: shard "../s1.safetensors" is not a plain file name`},
		{"empty weight map", map[string]string{}, nil, "empty or missing weight_map"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, c.weightMap)
			for n, ts := range c.shards {
				shard(t, dir, n, ts...)
			}
			_, err := OpenSafetensors(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), SafetensorsIndexName) {
				t.Fatalf("error %v, want one naming the index and containing %q", err, c.want)
			}
		})
	}
}

func TestWriteSafetensorsRefusesBadTensors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.safetensors")
	cases := []struct {
		t    *Tensor
		want string
	}{
		{&Tensor{Name: "a", DType: "F64", Shape: []int{1}, Data: make([]byte, 8)}, `unsupported dtype "F64"`},
		{&Tensor{Name: "a", DType: F32, Shape: []int{3}, Data: make([]byte, 8)}, "8 bytes for shape [3] of F32"},
		{&Tensor{Name: "__metadata__", DType: F32, Shape: []int{1}, Data: make([]byte, 4)}, "not allowed"},
	}
	for _, c := range cases {
		if err := WriteSafetensors(path, []*Tensor{c.t}, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused write left files: %v", entries)
	}
}

// Every proper prefix of a valid file is refused with an error naming it.
func TestSafetensorsEveryTruncation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "full.safetensors")
	if err := WriteSafetensors(path, sampleTensors(), map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for n := 0; n < len(b); n++ {
		_, err := parseSafetensorsHeader(bytes.NewReader(b[:n]), int64(n), "cut.safetensors")
		if err == nil || !strings.Contains(err.Error(), "cut.safetensors") {
			t.Fatalf("prefix of %d/%d bytes: error %v", n, len(b), err)
		}
	}
}
