package checkpoint

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"proscenium/engine/internal/testutil"
)

// npyImage builds an .npy file by hand: magic, version 1.0, the header padded
// to a multiple of 64 with a final newline, then data.
func npyImage(header string, data []byte) []byte {
	total := 10 + len(header) + 1
	header += strings.Repeat(" ", (64-total%64)%64) + "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(header)))
	return append(append(b, header...), data...)
}

func TestParseNPYFixtures(t *testing.T) {
	// Files written by numpy for the codec goldens (engine/cpu/testdata).
	dir := filepath.Join("..", "cpu", "testdata", "codec", "tiny-w8")
	for _, tc := range []struct {
		file  string
		dtype DType
		shape []int
		first float64
	}{
		{"codes.npy", I64, []int{10, 40}, 0x72a},
		{"pcm.npy", F32, []int{81920}, float64(math.Float32frombits(0xbc3d9567))},
		{"z_up.npy", F32, []int{128, 160}, math.NaN()},
	} {
		raw, err := os.ReadFile(filepath.Join(dir, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		tn, err := ParseNPY(tc.file, raw)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if tn.DType != tc.dtype || !slices.Equal(tn.Shape, tc.shape) {
			t.Errorf("%s: got %s %v, want %s %v", tc.file, tn.DType, tn.Shape, tc.dtype, tc.shape)
		}
		switch tc.dtype {
		case I64:
			v, err := TensorInt64s(tn)
			if err != nil || float64(v[0]) != tc.first {
				t.Errorf("%s: first value %v (%v), want %v", tc.file, v[0], err, tc.first)
			}
		case F32:
			v, err := tn.Float32s()
			if err != nil || (!math.IsNaN(tc.first) && float64(v[0]) != tc.first) {
				t.Errorf("%s: first value %v (%v), want %v", tc.file, v[0], err, tc.first)
			}
		}
		// The writer reproduces numpy's bytes exactly.
		enc, err := EncodeNPY(tn)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, raw) {
			t.Errorf("%s: EncodeNPY differs from numpy's file (header %q vs %q)", tc.file, enc[:128], raw[:128])
		}
	}
}

func TestNPYRoundTrip(t *testing.T) {
	dir := t.TempDir()
	cases := []*Tensor{
		Float32Tensor("f", []int{2, 3}, []float32{1, -2, 3.5, float32(math.Inf(1)), 0, -0.25}),
		Float32Tensor("scalar", []int{}, []float32{7}),
		Float32Tensor("empty", []int{0, 4}, nil),
		Int64Tensor("i", []int{3}, []int64{-1, 1 << 40, 4095}),
		Int32Tensor("j", []int{1, 1, 2}, []int32{-7, 1 << 30}),
	}
	for _, tn := range cases {
		p := filepath.Join(dir, tn.Name+".npy")
		if err := WriteNPYFile(p, tn); err != nil {
			t.Fatal(err)
		}
		got, err := ReadNPYFile(p)
		if err != nil {
			t.Fatalf("%s: %v", tn.Name, err)
		}
		if got.DType != tn.DType || !slices.Equal(got.Shape, tn.Shape) || !bytes.Equal(got.Data, tn.Data) {
			t.Errorf("%s: round trip gave %s %v", tn.Name, got.DType, got.Shape)
		}
		if raw, _ := os.ReadFile(p); (len(raw)-len(tn.Data))%64 != 0 {
			t.Errorf("%s: header not 64-byte aligned", tn.Name)
		}
	}
	v, _ := TensorInt64s(cases[4])
	if v[0] != -7 || v[1] != 1<<30 {
		t.Errorf("int32 values %v", v)
	}
	if _, err := EncodeNPY(&Tensor{Name: "b", DType: BF16, Shape: []int{1}, Data: []byte{0, 0}}); err == nil {
		t.Error("BF16 encoded without error")
	}
	if _, err := EncodeNPY(&Tensor{Name: "short", DType: F32, Shape: []int{2}, Data: []byte{0, 0, 0, 0}}); err == nil {
		t.Error("short data encoded without error")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(cases) {
		t.Errorf("%d files left in the directory, want %d", len(entries), len(cases))
	}
}

// TestWriteNPYFileReadOnlyDir writes into a directory without write
// permission. Root ignores permissions, so as root the test re-runs itself as
// user nobody.
func TestWriteNPYFileReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		testutil.RunAsNobody(t, "TestWriteNPYFileReadOnlyDir")
		return
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	err := WriteNPYFile(filepath.Join(dir, "x.npy"), Float32Tensor("x", []int{1}, []float32{1}))
	if err == nil || !strings.Contains(err.Error(), "x.npy") {
		t.Fatalf("error %v, want one naming x.npy", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d entries behind", len(entries))
	}
}

// A failure after the temporary file is written (the target is a directory,
// so the rename fails) removes the temporary file too; this runs as root.
func TestWriteNPYFileFailedRename(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "x.npy")
	if err := os.MkdirAll(filepath.Join(target, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteNPYFile(target, Float32Tensor("x", []int{1}, []float32{1}))
	if err == nil || !strings.Contains(err.Error(), "x.npy") {
		t.Fatalf("error %v, want one naming x.npy", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the directory, want only the target", len(entries))
	}
}

func TestParseNPYRejects(t *testing.T) {
	f4 := make([]byte, 8)
	good := "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
	if _, err := ParseNPY("good", npyImage(good, f4)); err != nil {
		t.Fatalf("baseline: %v", err)
	}
	v2 := append([]byte("\x93NUMPY\x02\x00"), binary.LittleEndian.AppendUint32(nil, 0xffffff)...)
	for _, tc := range []struct {
		name, want string
		b          []byte
	}{
		{"magic", "bad magic", []byte("NUMPY\x01\x00")},
		{"version", "version 4.0", []byte("\x93NUMPY\x04\x00\x10\x00")},
		{"huge v2 header", "exceeds", v2},
		{"header past end", "runs past", []byte("\x93NUMPY\x01\x00\xff\x00{}")},
		{"no newline", "newline", []byte("\x93NUMPY\x01\x00\x02\x00{}")},
		{"big endian", "not supported", npyImage("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", f4)},
		{"float64", "not supported", npyImage("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", f4)},
		{"fortran", "Fortran", npyImage("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", f4)},
		{"missing key", "missing key", npyImage("{'descr': '<f4', 'shape': (2,), }", f4)},
		{"extra key", "unexpected key", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", f4)},
		{"duplicate key", "twice", npyImage("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", f4)},
		{"negative dim", "non-negative", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", f4)},
		{"not a tuple", "missing comma", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", f4)},
		{"short data", "needs 12 data bytes", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4)},
		{"trailing data", "needs 4 data bytes", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f4)},
		{"huge shape", "needs more data", npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000000000, 100000000000000000), }", f4)},
		{"trailing text", "trailing text", npyImage(good+"x", f4)},
	} {
		_, err := ParseNPY(tc.name, tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func FuzzNPYHeader(f *testing.F) {
	f.Add(npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", make([]byte, 8)))
	f.Add(npyImage("{'shape': (1, 2), 'fortran_order': False, 'descr': '<i8'}", make([]byte, 16)))
	f.Add(npyImage("{'descr': '<i4', 'fortran_order': False, 'shape': (), }", make([]byte, 4)))
	f.Fuzz(func(t *testing.T, b []byte) {
		tn, err := ParseNPY("fuzz", b)
		if err != nil {
			return
		}
		// Whatever parses must re-encode and parse to the same array.
		enc, err := EncodeNPY(tn)
		if err != nil {
			t.Fatalf("parsed but cannot encode: %v", err)
		}
		back, err := ParseNPY("again", enc)
		if err != nil {
			t.Fatalf("re-encoded file does not parse: %v", err)
		}
		if back.DType != tn.DType || !slices.Equal(back.Shape, tn.Shape) || !bytes.Equal(back.Data, tn.Data) {
			t.Fatalf("round trip changed the array")
		}
	})
}
