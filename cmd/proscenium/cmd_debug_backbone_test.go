package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDebugBackboneMatchesGolden runs the driver on the odd-geometry golden
// checkpoint (prefill of 4 rows, then 3 single rows) and compares the .npy
// with HF transformers' whole-sequence hidden states.
func TestDebugBackboneMatchesGolden(t *testing.T) {
	root := filepath.Join("..", "..", "engine", "cpu", "testdata", "backbone")
	data, err := os.ReadFile(filepath.Join(root, "golden", "odd", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Sequences []struct {
			Name   string `json:"name"`
			IDs    []int  `json:"ids"`
			Hidden string `json:"hidden"`
		} `json:"sequences"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	s := m.Sequences[0]
	join := func(ids []int) string {
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = strconv.Itoa(id)
		}
		return strings.Join(parts, ",")
	}
	out := filepath.Join(t.TempDir(), "h.npy")
	err = runDebugBackbone([]string{"--model", filepath.Join(root, "ckpt", "odd"), "--ids", join(s.IDs[:4]), "--then", join(s.IDs[4:]), "--out", out})
	if err != nil {
		t.Fatal(err)
	}
	got := readNPY(t, out)
	want := readNPY(t, filepath.Join(root, "golden", "odd", s.Hidden))
	if len(got.Shape) != 2 || got.Shape[0] != want.Shape[0] || got.Shape[1] != want.Shape[1] {
		t.Fatalf("shape %v, want %v", got.Shape, want.Shape)
	}
	g, _ := got.Float32s()
	w, _ := want.Float32s()
	hid := want.Shape[1]
	for r := 0; r < want.Shape[0]; r++ {
		var num, den float64
		for i := r * hid; i < (r+1)*hid; i++ {
			d := float64(g[i]) - float64(w[i])
			num += d * d
			den += float64(w[i]) * float64(w[i])
		}
		if e := math.Sqrt(num / den); !(e < 1e-4) {
			t.Errorf("row %d: relative error %g", r, e)
		}
	}
}

func TestDebugBackboneUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--ids", "1,2"},
		{"--model", "x", "--ids", "1,b", "--out", "o.npy"},
		{"--model", "x", "--ids", "1", "--then", "2,,3", "--out", "o.npy"},
		{"--model", "x", "--ids", "1", "--out", "o.npy", "extra"},
		{"--model", "x", "--ids", "1", "--out", "o.npy", "--backend", "tpu"},
	} {
		if err := runDebugBackbone(args); !errors.Is(err, errUsage) {
			t.Errorf("%q: error %v, want a usage error", args, err)
		}
	}
}
