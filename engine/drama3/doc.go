// Package drama3 owns what a Drama 3 checkpoint means: config.json and the
// geometry it gives (config.go), the weight map that binds every stored
// tensor to the model by name (weights.go), the memory estimate (memory.go),
// the random-weights demo checkpoint writer (tiny.go), the prompt builder, the
// sampler, and the backend-independent generation loop and streaming policy.
//
// It knows no arithmetic of its own beyond sampling: the backends
// (engine/cpu, engine/cuda) bind their weights from the Weights tree here and
// read tensor bytes through its handles. File formats belong to
// engine/checkpoint, text to engine/tokenizer.
package drama3
