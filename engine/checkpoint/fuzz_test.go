package checkpoint

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Fuzz targets for the parsers that read untrusted bytes. Each must
// return an error or a well-formed result, never panic, and never allocate
// by a declared size that the input does not back.

func FuzzSafetensorsHeader(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.safetensors")
	for _, ts := range [][]*Tensor{sampleTensors(), {{Name: "test", DType: F32, Shape: []int{2, 2}, Data: make([]byte, 16)}}} {
		if err := WriteSafetensors(path, ts, map[string]string{"format": "pt"}); err != nil {
			f.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		f.Add(b)
	}
	f.Add(rawSafetensors(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]}}`, 12))
	f.Add(rawSafetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, 12))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := parseSafetensorsHeader(bytes.NewReader(data), int64(len(data)), "fuzz.safetensors")
		if err != nil {
			return
		}
		at := sf.dataOff
		for _, ti := range sf.tensors {
			if ti.Offset != at || ti.Size != int64(ti.NumElements()*ti.DType.Size()) {
				t.Fatalf("accepted a bad layout: %+v at %d", ti, at)
			}
			at += ti.Size
		}
		if at != int64(len(data)) {
			t.Fatalf("accepted tensors ending at %d in %d bytes", at, len(data))
		}
	})
}

func FuzzTorchZip(f *testing.F) {
	views, err := os.ReadFile("testdata/torch/views.pth")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(views)
	f.Add(torchZip(f,
		zipEntry{"a/data.pkl", tensorPickle("FloatStorage", "0", 4, 0, []int{2, 2}, []int{1, 2}), zip.Store},
		zipEntry{"a/data/0", make([]byte, 16), zip.Store},
		zipEntry{"a/byteorder", []byte("little"), zip.Store}))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ReadTorch(bytes.NewReader(data), int64(len(data)), "fuzz.pth")
		if err != nil {
			return
		}
		for _, n := range set.Names() {
			tn := set.Get(n)
			if len(tn.Data) != tn.NumElements()*tn.DType.Size() {
				t.Fatalf("%s: %d bytes for %v", n, len(tn.Data), tn.Shape)
			}
		}
	})
}

func FuzzUnpickle(f *testing.F) {
	// The data.pkl of both codec fixtures and of the strided-views archive.
	for _, p := range []string{"../demo/codec.pth", "../cpu/testdata/codec/tiny-w8/codec.pth", "testdata/torch/views.pth"} {
		fh, err := os.Open(p)
		if err != nil {
			continue
		}
		st, _ := fh.Stat()
		a, err := openTorchArchive(fh, st.Size(), p)
		if err == nil {
			if pkl, err := a.pickle(); err == nil {
				f.Add(pkl)
			}
		}
		fh.Close()
	}
	f.Add(tensorPickle("BFloat16Storage", "3", 6, 1, []int{2, 2}, []int{1, 2}))
	f.Add((&pickleBuilder{}).op(0x80, 2).global("os", "system").str("echo hi").op(0x85, 'R', '.').Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := unpickle(data)
		if err != nil {
			return
		}
		views, err := stateDictTensors(root)
		if err != nil {
			return
		}
		for _, v := range views {
			if len(v.t.shape) != len(v.t.stride) || v.t.offset < 0 || v.t.storage.numel < 0 {
				t.Fatalf("%s: inconsistent view %+v", v.name, v.t)
			}
		}
	})
}

// FuzzShardIndex: the index parser names only plain shard files of the
// index's directory, each once and sorted, and no error quotes a byte of a
// file that is not JSON.
func FuzzShardIndex(f *testing.F) {
	f.Add([]byte(`{"metadata":{},"weight_map":{"a":"model-00002-of-00002.safetensors","b":"model-00001-of-00002.safetensors","c":"model-00001-of-00002.safetensors"}}`))
	f.Add([]byte(`{"weight_map":{"a":"../s1.safetensors"}}`))
	f.Add([]byte(`{"weight_map":{}}`))
	f.Add([]byte("hunter2-password"))
	f.Fuzz(func(t *testing.T, data []byte) {
		wm, shards, err := parseShardIndex(data, "fuzz.index.json")
		if err != nil {
			if !json.Valid(data) && len(data) > 0 && strings.Contains(err.Error(), "invalid character") {
				t.Fatalf("error quotes the input: %v", err)
			}
			return
		}
		if len(wm) == 0 || len(shards) == 0 || !sort.StringsAreSorted(shards) {
			t.Fatalf("accepted %v with shards %v", wm, shards)
		}
		for i, s := range shards {
			if s == "" || s != filepath.Base(s) || s == "." || s == ".." || strings.ContainsAny(s, `/\`) || i > 0 && shards[i-1] == s {
				t.Fatalf("shard %q accepted", s)
			}
		}
		for _, s := range wm {
			if _, found := slices.BinarySearch(shards, s); !found {
				t.Fatalf("weight map names %q, not among %v", s, shards)
			}
		}
	})
}
