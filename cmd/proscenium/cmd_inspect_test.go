package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"proscenium/engine/drama3"
	"proscenium/engine/open"
)

// tinyCheckpoint writes make-tiny's output through the CLI into a fresh
// directory, or skips when the Qwen tokenizer is not installed (fails in CI).
func tinyCheckpoint(t *testing.T) string {
	t.Helper()
	if _, err := drama3.FindBaseTokenizer(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip("no Qwen tokenizer.json: run make deps")
	}
	dir := filepath.Join(t.TempDir(), "tiny")
	var out bytes.Buffer
	if err := runMakeTiny([]string{dir, "--seed", "5"}, &out); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyDir copies the regular files of src into a new directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func shards(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	sort.Strings(m)
	if len(m) < 2 {
		t.Fatalf("want several shards, got %v", m)
	}
	return m
}

// A folder that is no checkpoint (nothing could be read) gets its error
// alone, not an empty report that repeats it; --json still reports it.
func TestInspectNoCheckpoint(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	err := runInspect([]string{dir}, &out)
	if err == nil || !strings.Contains(err.Error(), "is not a Drama 3 checkpoint folder") || out.Len() != 0 {
		t.Errorf("inspect of an empty folder: %v, printed %q", err, out.String())
	}
	err = runInspect([]string{"--json", dir}, &out)
	var rep drama3.Inspection
	if err == nil || json.Unmarshal(out.Bytes(), &rep) != nil || rep.Error != err.Error() {
		t.Errorf("inspect --json of an empty folder: %v, printed %q", err, out.String())
	}
}

func TestInspectTinyAndBrokenShards(t *testing.T) {
	dir := tinyCheckpoint(t)

	var out bytes.Buffer
	if err := runInspect([]string{dir, "--context", "1000"}, &out); err != nil {
		t.Fatalf("inspect on make-tiny's output: %v\n%s", err, out.String())
	}
	for _, want := range []string{"unplaced tensors: none", "missing tensors: none", "problems: none",
		"4 layers (3 linear attention, 1 full attention)", "F8_E4M3 96 tensors", "device memory for 1000 rows"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if err := runInspect([]string{"--json", dir}, &out); err != nil {
		t.Fatal(err)
	}
	var rep drama3.Inspection
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	// Stored bytes are the sum over dtypes; the estimate's weights are every placed tensor, here all.
	var sum int64
	for _, s := range rep.Stored {
		sum += s.Bytes
	}
	if sum != rep.StoredBytes || rep.Memory == nil || rep.Memory.Weights != rep.StoredBytes || rep.Error != "" {
		t.Errorf("json report: stored %d (sum %d), memory %+v, error %q", rep.StoredBytes, sum, rep.Memory, rep.Error)
	}

	// The GPU section: all of it on the device, the least, and the tier
	// under a budget a byte short of the whole (the last layer's experts in
	// host memory and on the prefill stage, the embedding and LM head in
	// host memory).
	var gpu struct {
		GPU open.GPUMemory `json:"gpu"`
	}
	if err := json.Unmarshal(out.Bytes(), &gpu); err != nil || gpu.GPU.Whole <= gpu.GPU.Dense || gpu.GPU.Layers != 4 ||
		gpu.GPU.Dense+3*gpu.GPU.LayerExperts+gpu.GPU.HostDense != gpu.GPU.Whole+gpu.GPU.ExpertCache || gpu.GPU.ExpertCache <= 0 || gpu.GPU.UnderCap != "" {
		t.Fatalf("json gpu section %+v (%v)", gpu.GPU, err)
	}
	out.Reset()
	if err := runInspect([]string{dir, "--memory-cap", strconv.FormatInt(gpu.GPU.Whole-1, 10)}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"with every routed expert in pinned host memory", "experts in host memory: ", "(the experts of 4 of 4 layers to start with, one on the prefill stage;", "an expert cache (its table"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text output with a cap lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := runInspect([]string{dir, "--memory-cap", "1MiB"}, &out); err != nil || !strings.Contains(out.String(), "refused: the model does not fit") {
		t.Errorf("inspect under a 1 MiB cap: %v\n%s", err, out.String())
	}

	t.Run("lying offset", func(t *testing.T) {
		d := copyDir(t, dir)
		shard := shards(t, d)[2]
		b, _ := os.ReadFile(shard)
		n := binary.LittleEndian.Uint64(b[:8])
		hdr := string(b[8 : 8+n])
		// Move the first tensor's data range 2 bytes later: same header length.
		i := strings.Index(hdr, `"data_offsets":[0,`)
		if i < 0 {
			t.Fatal("no tensor at offset 0")
		}
		j := i + strings.Index(hdr[i:], "]")
		var begin, end int64
		if err := json.Unmarshal([]byte(hdr[i+len(`"data_offsets":`):j+1]), &[]*int64{&begin, &end}); err != nil {
			t.Fatal(err)
		}
		// Shift by an even d whose end keeps its digits: the header keeps its length.
		lie := ""
		for d := int64(2); d <= 8 && len(lie) != j+1-i; d += 2 {
			lie = `"data_offsets":[` + itoa(d) + `,` + itoa(end+d) + `]`
		}
		if len(lie) != j+1-i {
			t.Fatalf("no shift of [0, %d] keeps the header's length", end)
		}
		copy(b[8+i:], lie)
		os.WriteFile(shard, b, 0o644)
		out.Reset()
		err := runInspect([]string{d}, &out)
		if err == nil || !strings.Contains(err.Error(), filepath.Base(shard)) || errors.Is(err, errUsage) {
			t.Fatalf("inspect with a lying offset: %v", err)
		}
	})
	t.Run("truncated shard", func(t *testing.T) {
		d := copyDir(t, dir)
		shard := shards(t, d)[1]
		b, _ := os.ReadFile(shard)
		os.WriteFile(shard, b[:len(b)-100], 0o644)
		err := runInspect([]string{d}, &out)
		if err == nil || !strings.Contains(err.Error(), filepath.Base(shard)) {
			t.Fatalf("inspect with a truncated shard: %v", err)
		}
	})
	t.Run("config contradicts tensors", func(t *testing.T) {
		d := copyDir(t, dir)
		cfgPath := filepath.Join(d, "config.json")
		b, _ := os.ReadFile(cfgPath)
		b = bytes.Replace(b, []byte(`"moe_intermediate_size": 160`), []byte(`"moe_intermediate_size": 128`), 1)
		os.WriteFile(cfgPath, b, 0o644)
		out.Reset()
		err := runInspect([]string{d}, &out)
		if err == nil || !strings.Contains(err.Error(), "moe_intermediate_size") || !strings.Contains(err.Error(), "mlp.experts.") {
			t.Fatalf("inspect with a contradicting config: %v", err)
		}
	})
	t.Run("unknown tensor is listed, missing is fatal", func(t *testing.T) {
		d := copyDir(t, dir)
		idx := filepath.Join(d, "model.safetensors.index.json")
		b, _ := os.ReadFile(idx)
		var m map[string]any
		json.Unmarshal(b, &m)
		wm := m["weight_map"].(map[string]any)
		// Rename a tensor in one shard and the index: it becomes unknown, and the original missing.
		shard := shards(t, d)[2]
		sb, _ := os.ReadFile(shard)
		old, renamed := "model.layers.0.linear_attn.A_log", "model.layers.0.linear_attn.A_lox"
		sb = bytes.Replace(sb, []byte(`"`+old+`"`), []byte(`"`+renamed+`"`), 1)
		os.WriteFile(shard, sb, 0o644)
		wm[renamed] = wm[old]
		delete(wm, old)
		b, _ = json.Marshal(m)
		os.WriteFile(idx, b, 0o644)
		out.Reset()
		err := runInspect([]string{d}, &out)
		if err == nil || !strings.Contains(err.Error(), "missing tensor "+old) {
			t.Fatalf("want missing %s, got %v", old, err)
		}
		if !strings.Contains(out.String(), "unplaced tensors (1):\n  "+renamed) {
			t.Errorf("unplaced tensor not listed:\n%s", out.String())
		}
	})
	t.Run("no codec", func(t *testing.T) {
		d := copyDir(t, dir)
		os.Remove(filepath.Join(d, "codec.pth"))
		out.Reset()
		err := runInspect([]string{d}, &out)
		if err == nil || !strings.Contains(err.Error(), "codec.pth") || !strings.Contains(out.String(), "file codec.pth") {
			t.Fatalf("inspect without codec.pth: %v\n%s", err, out.String())
		}
	})
	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{}, {dir, dir}, {dir, "--context", "0"}, {"--bogus", dir}} {
			if err := runInspect(args, &out); !errors.Is(err, errUsage) {
				t.Errorf("inspect %q: %v, want a usage error", args, err)
			}
		}
	})
}

func itoa(v int64) string {
	b, _ := json.Marshal(v)
	return string(b)
}
