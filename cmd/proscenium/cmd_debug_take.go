package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"proscenium/engine/api"
	"proscenium/engine/checkpoint"
	"proscenium/engine/open"
)

func init() {
	registerDebug(command{name: "take", summary: "a whole take with its codes and per-stage tensors (.npy) for backend comparisons", run: func(args []string) error {
		return runDebugTake(args, os.Stderr)
	}})
}

// runDebugTake writes into --out:
//
//	codes.npy           int64 [codebooks, frames]
//	pcm.npy             float32 [frames·samples per frame]
//	prefill_hidden.npy  float32 [prompt rows, hidden]: backbone final-norm states
//	logits.0.npy        float32 [draws, semantic codes + 1]: every semantic logits vector
//	logits.J.npy        float32 [frames, entries]: codebook J's logits (J = 1..9)
//	tower_layer.L.npy   float32 [frames, hidden]: tower layer L's h_out on audio rows
//	feedback_row.npy    float32 [frames − 1 or frames, hidden]: backbone input rows
//	backbone_hidden.npy float32 [same, hidden]: their final-norm states
//	take.json           the request and the finish
//
// Vectors of one name are stacked in the order the take made them.
func runDebugTake(args []string, log io.Writer) error {
	fs := newFlags("debug take")
	tf := addTakeFlags(fs)
	out := fs.String("out", "", "output directory (required)")
	req, err := parseTakeFlags(fs, tf, args, os.Stdin)
	if err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: --out is required", errUsage)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if *tf.backend == open.CUDA {
		// The CUDA backend runs in the worker: its debug-take tool runs the
		// take there beside the CPU reference (teacher-forced logits,
		// free-running codes per seed) and writes the comparison.
		fwd := []string{"-model", *tf.model, "-text", req.Text, "-out", filepath.Join(*out, "compare.json"), "-numerics", tf.numerics.String()}
		return runWorkerTool("", "debug-take", fwd)
	}
	stacks := map[string][]float32{}
	widths := map[string]int{}
	var probeErr error
	probe := func(name string, v []float32) {
		if w, ok := widths[name]; ok && w != len(v) {
			if probeErr == nil {
				probeErr = fmt.Errorf("probe %s: vectors of %d and %d values", name, w, len(v))
			}
			return
		}
		widths[name] = len(v)
		stacks[name] = append(stacks[name], v...)
	}
	eng, err := open.Open(context.Background(), *tf.model, open.Options{Backend: *tf.backend, Probe: probe})
	if err != nil {
		return err
	}
	defer eng.Close()
	info := eng.Info()
	pcm, fin, err := runTake(eng, req, nil)
	if err != nil {
		return err
	}
	if probeErr != nil {
		return probeErr
	}
	names := make([]string, 0, len(stacks))
	for n := range stacks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w := widths[n]
		v := stacks[n]
		t := checkpoint.Float32Tensor(n, []int{len(v) / w, w}, v)
		if err := checkpoint.WriteNPYFile(filepath.Join(*out, n+".npy"), t); err != nil {
			return err
		}
	}
	if err := checkpoint.WriteNPYFile(filepath.Join(*out, "codes.npy"), codesTensor(fin.Codes, info.Codebooks)); err != nil {
		return err
	}
	if err := checkpoint.WriteNPYFile(filepath.Join(*out, "pcm.npy"), checkpoint.Float32Tensor("pcm", []int{len(pcm)}, pcm)); err != nil {
		return err
	}
	summary, err := json.MarshalIndent(struct {
		Request api.SpeechRequest `json:"request"`
		Info    api.Info          `json:"info"`
		Finish  *api.Finish       `json:"finish"`
	}{req, info, fin}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "take.json"), append(summary, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: %d frames (%s), %d tensors\n", *out, fin.Frames, fin.Reason, len(names)+2)
	return nil
}
