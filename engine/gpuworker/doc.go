// Package gpuworker runs the CUDA backend in a separate process and talks to
// it: the framed protocol on the worker's stdin and stdout, the server loop
// the worker (cmd/proscenium-gpu) runs, and the client that the app and the
// command line use to start it, send requests, receive events and PCM, cancel,
// and restart it after it dies.
//
// Why a process: gorgonia.org/cu ends the process in its package init when no
// GPU is present, and a crashed driver call must not take the studio with it.
// This package never imports gorgonia.org/cu (nor anything that does); it
// builds and is tested everywhere, with a fake worker (the test binary itself).
package gpuworker
