//go:build cuda

package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

func init() {
	registerTool(tool{name: "debug-backbone", summary: "final-norm hidden states of the GPU backbone for token ids (.npy), as `proscenium debug backbone`", run: debugBackbone})
}

// debugBackbone is the GPU side of `proscenium debug backbone --backend cuda`
// (cmd/proscenium/cmd_debug_backbone.go, which checks the flags first): the
// prefill's rows, then each --then row appended as one step, written as
// float32 [rows, hidden].
func debugBackbone(args []string) error {
	fs := flag.NewFlagSet("proscenium-gpu debug-backbone", flag.ContinueOnError)
	model := fs.String("model", "", "checkpoint directory (config.json + safetensors)")
	ids := fs.String("ids", "", "comma-separated token ids of the prefill (required)")
	then := fs.String("then", "", "comma-separated token ids appended one row at a time after the prefill")
	out := fs.String("out", "", "output .npy file: float32 [rows, hidden] (required)")
	ordinal := fs.Int("device", 0, "CUDA device ordinal")
	var numerics drama3.Numerics
	fs.Var(&numerics, "numerics", drama3.NumericsUsage)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *model == "" || *ids == "" || *out == "" {
		return fmt.Errorf("--model, --ids and --out are required")
	}
	prefill, err := tokenIDs("--ids", *ids)
	if err != nil {
		return err
	}
	var steps []int
	if *then != "" {
		if steps, err = tokenIDs("--then", *then); err != nil {
			return err
		}
	}
	ck, err := drama3.Load(*model)
	if err != nil {
		return err
	}
	defer ck.Close()
	d, err := cuda.Open(*ordinal, 0, 0)
	if err != nil {
		return err
	}
	d.Numerics = numerics
	defer d.Close()
	b, err := cuda.LoadBackbone(d, ck, len(prefill)+len(steps), nil)
	if err != nil {
		return err
	}
	defer b.Close()
	rows := make([]cuda.BackboneRow, len(prefill))
	for i, id := range prefill {
		rows[i].Token = id
	}
	hidden, err := b.Prefill(rows)
	if err != nil {
		return err
	}
	for _, id := range steps {
		h, err := b.Step(cuda.BackboneRow{Token: id})
		if err != nil {
			return err
		}
		hidden = append(hidden, h...)
	}
	n := len(prefill) + len(steps)
	return checkpoint.WriteNPYFile(*out, checkpoint.Float32Tensor("hidden", []int{n, b.Hidden()}, hidden))
}

// tokenIDs reads "1,2,3".
func tokenIDs(flagName, s string) ([]int, error) {
	var ids []int
	for _, p := range strings.Split(s, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a token id", flagName, p)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
