// Package drama3 owns what a Drama 3 checkpoint means: the directory, its
// file names and the opened Checkpoint the backends build from
// (checkpoint.go), config.json and the geometry it gives (config.go), the
// weight map that binds every stored tensor to the model by name and the
// Model tree generic over the tensor handle (weights.go), the semantic head
// and feedback row (heads.go), the memory estimate (memory.go), the
// random-weights demo checkpoint writer (tiny.go), the prompt builder, the
// sampler, and the backend-independent generation loop and streaming policy.
//
// Backends (engine/cpu, engine/cuda) map the bound Model[*Param] to their
// own handles with Map and do the arithmetic. File formats belong to
// engine/checkpoint, text to engine/tokenizer.
package drama3
