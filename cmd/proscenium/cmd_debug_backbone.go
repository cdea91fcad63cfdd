package main

import (
	"fmt"
	"strconv"
	"strings"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

func init() {
	registerDebug(command{name: "backbone", summary: "final-norm hidden states of the backbone (CPU, or --backend cuda) for token ids (.npy)", run: runDebugBackbone})
}

// runDebugBackbone writes float32 [rows, hidden]: the prefill's rows, then
// each --then row appended one at a time (the one-row recurrence).
func runDebugBackbone(args []string) error {
	fs := newFlags("debug backbone")
	model := fs.String("model", "", "checkpoint directory (config.json + safetensors)")
	ids := fs.String("ids", "", "comma-separated token ids of the prefill (required)")
	then := fs.String("then", "", "comma-separated token ids appended one row at a time after the prefill")
	out := fs.String("out", "", "output .npy file: float32 [rows, hidden] (required)")
	backend := debugBackendFlags(fs, "debug-backbone")
	var numerics drama3.Numerics // checked here, forwarded to the worker's tool (the CPU is exact)
	fs.Var(&numerics, "numerics", drama3.NumericsUsage)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *model == "" || *ids == "" || *out == "" {
		return fmt.Errorf("%w: --model, --ids and --out are required", errUsage)
	}
	prefill, err := parseBackboneIDs("--ids", *ids)
	if err != nil {
		return err
	}
	var steps []int
	if *then != "" {
		if steps, err = parseBackboneIDs("--then", *then); err != nil {
			return err
		}
	}

	if done, err := backend.forward(); done {
		return err
	}

	cfg, w, err := cpu.LoadBackboneDir(*model)
	if err != nil {
		return err
	}
	b, err := cpu.NewBackbone(cfg, w)
	if err != nil {
		return err
	}
	hidden, err := b.Run(cpu.TokenRows(prefill))
	if err != nil {
		return err
	}
	for _, id := range steps {
		h, err := b.Run(cpu.TokenRows([]int{id}))
		if err != nil {
			return err
		}
		hidden = append(hidden, h...)
	}
	rows := len(prefill) + len(steps)
	return checkpoint.WriteNPYFile(*out, checkpoint.Float32Tensor("hidden", []int{rows, cfg.HiddenSize}, hidden))
}

// parseBackboneIDs reads "1,2,3" into token ids.
func parseBackboneIDs(flagName, s string) ([]int, error) {
	parts := strings.Split(s, ",")
	ids := make([]int, 0, len(parts))
	for _, p := range parts {
		id, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %q is not a token id", errUsage, flagName, p)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
