//go:build cuda

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// A tool is a GPU-side command the worker runs instead of serving the
// protocol: `proscenium-gpu TOOL [flags]` (benchmarks, stage drivers). The
// command line's `proscenium bench …` and `proscenium debug … --backend cuda`
// start the worker with a tool's name and relay its output, so nothing that
// links CUDA enters the proscenium binary. Each tool lives in its own file
// and registers itself in init.
type tool struct {
	name    string
	summary string
	run     func(args []string) error // args after the tool's name
}

var tools = map[string]tool{}

func registerTool(t tool) {
	if _, dup := tools[t.name]; dup {
		panic("duplicate tool " + t.name)
	}
	tools[t.name] = t
}

// runTool runs the tool named by args[0], if there is one: ok reports
// whether args named a tool, code is the exit status.
func runTool(args []string) (ok bool, code int) {
	if len(args) == 0 {
		return false, 0
	}
	if args[0] == "tools" {
		names := make([]string, 0, len(tools))
		for n := range tools {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Printf("  %-16s %s\n", n, tools[n].summary)
		}
		return true, 0
	}
	t, found := tools[args[0]]
	if !found {
		return false, 0
	}
	if err := t.run(args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "proscenium-gpu %s: %v\n", t.name, err)
		return true, 1
	}
	return true, 0
}

// printJSON writes a tool's result to stdout as indented JSON (the -json
// output of the bench tools).
func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
