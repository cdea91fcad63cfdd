package main

import "fmt"

// `proscenium bench NAME [flags]`: benchmarks, one per file, each registered
// with registerBench. GPU benchmarks forward to a worker tool (runWorkerTool).

var benchCommands = map[string]command{}

// registerBench adds a benchmark: `proscenium bench NAME …`.
func registerBench(c command) { add(benchCommands, c) }

func init() {
	register(command{name: "bench", summary: "benchmarks (bench -h lists them); figures as a table or JSON", run: runBench})
}

func runBench(args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		listCommands("proscenium bench NAME [flags]", benchCommands)
		if len(args) == 0 {
			return fmt.Errorf("%w: bench needs a benchmark name", errUsage)
		}
		return nil
	}
	c, ok := benchCommands[args[0]]
	if !ok {
		return fmt.Errorf("%w: unknown benchmark %q", errUsage, args[0])
	}
	return c.run(args[1:])
}
