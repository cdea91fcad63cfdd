package take

import (
	"context"

	"proscenium/engine/api"
	"proscenium/engine/audio/pcm"
	"proscenium/engine/drama3"
)

// This file is the one assembly of an engine from a checkpoint directory,
// whatever the backend: engine/open composes the CPU's in this process and
// the GPU worker (cmd/proscenium-gpu) the CUDA one, each giving only what
// differs (the frames, the memory report, the backend's name).

// Backend is what Compose needs of a backend besides the directory.
type Backend struct {
	// Name is the backend as --backend spells it; Reason why it was chosen
	// (api.Info.BackendReason).
	Name, Reason string
	// Frames builds the backend's frames from the opened checkpoint (its
	// weights, tokenizer and codec read once). The checkpoint's files are
	// closed when Compose returns: Frames must read what it keeps.
	Frames func(ck *drama3.Checkpoint) (drama3.FrameBackend, error)
	// Memory reports the memory Stats shows.
	Memory func() api.Memory
	// Probe: Config.Probe.
	Probe func(name string, values []float32)
	// Batch is the most takes the engine runs together (api.BatchOf: 0
	// is api.DefaultBatch). NewTake makes another take's frames beside
	// first's (its own state over first's weights) when a take needs them;
	// nil: one take at a time whatever Batch says.
	Batch   int
	NewTake func(first drama3.FrameBackend) (drama3.FrameBackend, error)
	// TakeSet, when set, makes the set of up to batch takes over first's
	// frames with the backend's batched kernels (the GPU's
	// cuda.TakeFrames: one step a frame for every live take) in place of
	// drama3.Interleave over NewTake; the set owns first (Close closes it).
	TakeSet func(first drama3.FrameBackend, batch int) (drama3.TakeSet, error)
}

// Compose opens the checkpoint directory dir once (drama3.LoadEngine:
// config, weight index, tokenizer, codec), builds b's frames from it and
// returns the take engine over them (up to b.Batch takes together), its Info from the checkpoint and the
// frames. ctx is checked before the weights load.
func Compose(ctx context.Context, dir string, b Backend) (*Engine, error) {
	batch, err := api.BatchOf(b.Batch)
	if err != nil {
		return nil, err
	}
	if b.NewTake == nil && b.TakeSet == nil {
		batch = 1
	}
	ck, err := drama3.LoadEngine(dir)
	if err != nil {
		return nil, err
	}
	defer ck.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	frames, err := b.Frames(ck)
	if err != nil {
		return nil, err
	}
	cfg := ck.Config
	info := api.Info{
		Model:           dir,
		Backend:         b.Name,
		BackendReason:   b.Reason,
		Demo:            ck.Demo,
		SampleRate:      pcm.SampleRate,
		SamplesPerFrame: frames.SamplesPerFrame(),
		Codebooks:       cfg.Audio.NumCodebooks,
		CodebookSizes:   append([]int(nil), frames.CodebookEntries()...),
		Parameters:      drama3.CountParameters(cfg).Total(),
	}
	var set drama3.TakeSet
	if b.TakeSet != nil && batch > 1 {
		set, err = b.TakeSet(frames, batch) // closes frames when it fails
	} else {
		var il *drama3.Interleave
		if il, err = drama3.NewInterleave(frames, func() (drama3.FrameBackend, error) { return b.NewTake(frames) }, batch); err != nil {
			frames.Close()
		}
		set = il
	}
	if err != nil {
		return nil, err
	}
	e, err := New(Config{Info: info, Takes: set, Tokenizer: ck.Tokenizer, Memory: b.Memory, Probe: b.Probe})
	if err != nil {
		set.Close()
		return nil, err
	}
	return e, nil
}
