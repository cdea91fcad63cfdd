package main

// `proscenium bench NAME [flags]`: benchmarks, one per file, each registered
// with registerBench. GPU benchmarks forward to a worker tool (runWorkerTool).

var benchCommands = map[string]command{}

// registerBench adds a benchmark: `proscenium bench NAME …`.
func registerBench(c command) { add(benchCommands, c) }

func init() {
	register(command{name: "bench", summary: "benchmarks (bench -h lists them); figures as a table or JSON", run: runBench})
}

func runBench(args []string) error {
	return dispatch("proscenium bench NAME [flags]", "benchmark", benchCommands, args)
}
