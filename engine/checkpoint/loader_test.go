package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// loaderFixture writes a checkpoint whose tensors straddle 4 KiB buffers:
// sizes from 0 to ~3 buffers, odd byte counts, two shards.
func loaderFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var ts []*Tensor
	for i, n := range []int{3000, 1, 0, 2500, 777, 12289, 5, 4096} {
		data := make([]byte, n*4)
		for j := range data {
			data[j] = byte(i*31 + j*7 + j/251)
		}
		ts = append(ts, &Tensor{Name: fmt.Sprintf("t%d", i), DType: F32, Shape: []int{n}, Data: data})
	}
	ts = append(ts, &Tensor{Name: "odd.bool", DType: Bool, Shape: []int{4099}, Data: bytes.Repeat([]byte{1, 0, 0}, 4099)[:4099]})
	if _, err := WriteSafetensorsSharded(dir, ts, map[string]string{"format": "pt"}, 40000); err != nil {
		t.Fatal(err)
	}
	return dir
}

// failingDirect is an O_DIRECT file whose reads are refused with EINVAL.
type failingDirect struct{ loadFile }

func (failingDirect) ReadAt([]byte, int64) (int, error) {
	return 0, &os.PathError{Op: "pread", Path: "x", Err: syscall.EINVAL}
}

func TestLoadMatchesPlainReads(t *testing.T) {
	dir := loaderFixture(t)
	ix, err := OpenSafetensors(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if len(ix.Files) < 2 {
		t.Fatalf("fixture has %d shards, want several", len(ix.Files))
	}
	want := map[string][]byte{}
	for _, ti := range ix.Tensors() {
		tn, err := ix.ReadTensor(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		want[ti.Name] = tn.Data
	}
	realOpen, realPiece := openDirect, minReadPiece
	defer func() { openDirect, minReadPiece = realOpen, realPiece }()
	minReadPiece = DirectAlign
	unaligned := func(n int) ([]byte, error) { b, _ := AlignedAlloc(n + 1); return b[1 : n+1], nil }
	cases := []struct {
		name      string
		opts      LoadOptions
		open      func(string) (loadFile, error)
		wantFalls int // O_DIRECT fallbacks per file
	}{
		{"direct", LoadOptions{BufferSize: 4096}, realOpen, -1},
		{"direct one reader", LoadOptions{BufferSize: 3 * 4096, Readers: 1}, realOpen, -1},
		{"direct 5 readers of 1 page", LoadOptions{BufferSize: 5 * 4096, Readers: 5}, realOpen, -1},
		{"buffered 3 readers", LoadOptions{BufferSize: 7 * 4096, Readers: 3, Buffered: true}, realOpen, 0},
		{"direct 3 pages", LoadOptions{BufferSize: 3 * 4096}, realOpen, -1},
		{"direct default buffer", LoadOptions{}, realOpen, -1},
		{"buffered", LoadOptions{BufferSize: 4096, Buffered: true}, realOpen, 0},
		{"buffered odd size", LoadOptions{BufferSize: 5000, Buffered: true}, realOpen, 0},
		{"open refused", LoadOptions{BufferSize: 4096}, func(string) (loadFile, error) {
			return nil, &os.PathError{Op: "open", Path: "x", Err: syscall.EINVAL}
		}, 1},
		{"first read refused", LoadOptions{BufferSize: 8192}, func(p string) (loadFile, error) {
			f, err := os.Open(p)
			return failingDirect{f}, err
		}, 1},
		{"unaligned allocator", LoadOptions{BufferSize: 4096, Alloc: unaligned}, realOpen, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			openDirect = c.open
			got := map[string][]byte{}
			var order []string
			res, err := ix.Load(c.opts, func(ti TensorInfo, off int64, data []byte) error {
				if off != int64(len(got[ti.Name])) {
					return fmt.Errorf("%s: chunk at %d after %d bytes", ti.Name, off, len(got[ti.Name]))
				}
				if off == 0 {
					order = append(order, ti.Name)
				}
				got[ti.Name] = append(got[ti.Name], data...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range ix.Tensors() {
				if !bytes.Equal(got[ti.Name], want[ti.Name]) {
					t.Errorf("%s: %d bytes loaded differ from the %d of a plain read", ti.Name, len(got[ti.Name]), len(want[ti.Name]))
				}
			}
			var wantOrder []string
			for _, ti := range ix.Tensors() {
				wantOrder = append(wantOrder, ti.Name)
			}
			if strings.Join(order, ",") != strings.Join(wantOrder, ",") {
				t.Errorf("order %v, want file-offset order %v", order, wantOrder)
			}
			if res.Bytes != ix.TotalBytes() || res.ReadBytes < res.Bytes {
				t.Errorf("result %+v, want %d bytes", res, ix.TotalBytes())
			}
			if res.DirectFiles+res.BufferedFiles != len(ix.Files) {
				t.Errorf("result %+v for %d files", res, len(ix.Files))
			}
			if c.wantFalls >= 0 && res.Fallbacks != c.wantFalls*len(ix.Files) {
				t.Errorf("fallbacks %d, want %d", res.Fallbacks, c.wantFalls*len(ix.Files))
			}
			if c.wantFalls > 0 && res.DirectFiles != 0 {
				t.Errorf("%d files read direct after EINVAL", res.DirectFiles)
			}
			t.Logf("%+v", res)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := loaderFixture(t)
	ix, err := OpenSafetensors(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	stopErr := errors.New("stop here")
	_, err = ix.Load(LoadOptions{BufferSize: 4096}, func(ti TensorInfo, off int64, data []byte) error {
		if ti.Name == "t5" && off > 0 {
			return stopErr
		}
		return nil
	})
	if !errors.Is(err, stopErr) {
		t.Errorf("consumer error: got %v", err)
	}
	_, err = ix.Load(LoadOptions{Alloc: func(int) ([]byte, error) { return nil, errors.New("no pinned memory") }}, nil)
	if err == nil || !strings.Contains(err.Error(), "no pinned memory") {
		t.Errorf("allocator error: got %v", err)
	}
	// A shard truncated after its header was read.
	last := ix.Files[len(ix.Files)-1]
	st, _ := os.Stat(last)
	if err := os.Truncate(last, st.Size()-100); err != nil {
		t.Fatal(err)
	}
	for _, buffered := range []bool{false, true} {
		_, err = ix.Load(LoadOptions{BufferSize: 4096, Buffered: buffered}, func(TensorInfo, int64, []byte) error { return nil })
		if err == nil || !strings.Contains(err.Error(), filepath.Base(last)) || !strings.Contains(err.Error(), "file ends before its data does") {
			t.Errorf("truncated shard (buffered %v): got %v", buffered, err)
		}
	}
}
