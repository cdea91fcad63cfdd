// Package gpuworker runs an api.Engine in a separate process and talks to
// it: the framed protocol on the worker's stdin and stdout, ServeEngine (the
// loop a worker runs: proscenium-gpu with the CUDA backend, `proscenium
// worker` with the CPU one), and the client side that starts the worker,
// opens an engine in it (OpenEngine) and restarts it after it dies
// (Supervisor).
//
// Why a process: gorgonia.org/cu ends the process in its package init when no
// GPU is present, and a crashed driver call must not take the studio with it.
// This package never imports gorgonia.org/cu (nor anything that does); it
// builds and is tested everywhere, with the test binary as the worker, and
// the CPU engine crosses the same boundary in CI (synth --isolate).
package gpuworker
