//go:build cuda

package main

import (
	"context"
	"testing"

	"proscenium/engine/api"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
	"proscenium/engine/gpuworker"
)

// TestCUDAExpertCacheHotSet: with every router zeroed each step routes to
// the same top-k experts of every layer (ties go to the lowest ids), a
// forced hot set. Under a cap that puts two of the demo checkpoint's four
// layers' experts in the arena (the slots), one on the stage and one in
// host memory only, the expert cache promotes that layer's hot experts into
// the slots of the arena layers' unused ones (writing those back to host
// memory first): the last of four takes reads more than 90 % of its routed
// pairs on the device, and every take's codes are those of the engine
// with every expert on the device (same zeroed routers, same seeds, the
// tower's drawn-code tables left out as under the cap), under either
// numerics policy. The demo's layers route 4 of 8 experts a step, so the
// uniform share is half of them: the policy's spread floor (what keeps
// Drama 3's 8 of 256 from thrashing) is off here.
func TestCUDAExpertCacheHotSet(t *testing.T) {
	dir, dev := tinyOnDevice(t)
	saved := cuda.DefaultExpertCacheConfig
	cuda.DefaultExpertCacheConfig.Spread = 0
	defer func() { cuda.DefaultExpertCacheConfig = saved }()
	for _, policy := range []drama3.Numerics{drama3.NumericsExact, drama3.NumericsFast} {
		t.Run(string(policy), func(t *testing.T) {
			dev.Numerics = policy
			checkHotSet(t, dev, dir)
		})
	}
}

// checkHotSet is TestCUDAExpertCacheHotSet under dev's numerics policy.
func checkHotSet(t *testing.T, dev *cuda.Device, dir string) {
	ctx := context.Background()
	// Four takes (a demo take may end early): the cache warms in the first
	// ones, the last one's counts are judged.
	var reqs []api.SpeechRequest
	for i, text := range []string{"Hello there, this is a take made on the GPU.", "And a second take, the cache warming.",
		"A third one, to be sure of the warm-up.", "And the last take, served from the device."} {
		reqs = append(reqs, api.SpeechRequest{Text: text, Seed: uint64(5 + i), MaxFrames: 200, Sampling: api.Sampling{Temperature: 1, TopP: 0.9, TopK: 30}})
	}
	type run struct {
		codes    [][][]int
		admitted int64
		caches   []*api.ExpertCache // per take: the counts since the load
		tier     *api.ExpertTier
	}
	takes := func(capBytes int64) run {
		t.Helper()
		dev.Pool.SetCap(cuda.DeviceMem, capBytes)
		defer dev.Pool.SetCap(cuda.DeviceMem, 0)
		// The default voice cache, set: the arithmetic below takes it off.
		e, err := openCUDAEngine(ctx, dev, gpuworker.LoadRequest{Model: dir, Batch: 1, VoiceCacheBytes: cuda.DefaultPrefixCacheBytes}, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		f := e.(cudaEngine).frames.all[0]
		zeroRouters(t, dev, f.Backbone().W)
		r := run{admitted: f.Admitted()}
		for _, req := range reqs {
			fin, err := e.Synthesize(ctx, req, func(api.Event) {})
			if err != nil {
				t.Fatal(err)
			}
			r.codes = append(r.codes, fin.Codes)
			r.caches = append(r.caches, e.Stats().Memory.Experts.Cache)
		}
		r.tier = e.Stats().Memory.Experts
		return r
	}
	// The cap is figured as TestCUDAEngineTiers figures its caps (found
	// stale in session 46: figured from the uncapped load, it let a load of
	// shorter passes without the tower's tables fit whole, no expert cache).
	// The uncapped load takes longer prefill passes where the device has
	// room (cuda.PrefillPassRows); a cap a byte below what it admitted makes
	// a load take shorter ones, every expert still on the device: the cap
	// is figured from the shortest passes' load.
	whole := takes(0)
	for {
		r := takes(whole.admitted - 1)
		if x := r.tier; x == nil || x.Tier != cuda.TierDevice.String() || whole.admitted-r.admitted < 1<<20 {
			break
		}
		whole = r
	}
	in, err := cuda.ModelTierInput(dir, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	// A byte short of the model: the tower's drawn-code tables give way
	// before any expert, as they do under the cap below. That load is the
	// codes' reference: with the tables a take's tower values are the same
	// within float32 rounding, not bit for bit.
	model, layer := whole.admitted-cuda.DefaultPrefixCacheBytes, in.LayerExperts[0]
	ref := takes(model - 1)
	if x := ref.tier; x == nil || x.Tier != cuda.TierDevice.String() {
		t.Fatalf("a cap a byte below the model: readout %+v, want every expert on the device", x)
	}
	// The dense part under the host tier: the model less the tables, the
	// experts and the host-capable dense tensors, with the stage and the
	// expert cache's table.
	dense := model - towerDrawnTables(t, dir) - 4*layer - in.HostDense + layer + cuda.ExpertCacheBytes(4, in.Experts)
	capped := takes(dense + 2*layer)
	if x := capped.tier; x == nil || x.Tier != cuda.TierHostExperts.String() || x.DeviceLayers != 3 {
		t.Fatalf("under a cap of %d bytes: readout %+v, want two layers' experts in the arena and one on the stage", dense+2*layer, x)
	}
	n := len(reqs)
	before, last := capped.caches[n-2], capped.caches[n-1]
	if before == nil || last == nil {
		t.Fatalf("no expert cache under the cap: %+v", capped.caches)
	}
	// The last take alone: the counts since the take before.
	hits, misses := last.Hits-before.Hits, last.Misses-before.Misses
	rate := float64(hits) / float64(max(hits+misses, 1))
	t.Logf("before the last take %+v; the last take: %d hits, %d misses (%.3f), frames %v", *before, hits, misses, rate, frameCounts(capped.codes))
	if before.Promotions < int64(in.TopK) || rate <= 0.9 || hits+misses == 0 {
		t.Errorf("the hot set was not served from the device: %d promotions before the last take, hit rate %.3f in it", before.Promotions, rate)
	}
	for i := range reqs {
		if f, cb := firstCodeDiff(ref.codes[i], capped.codes[i]); f >= 0 || len(ref.codes[i]) != len(capped.codes[i]) {
			t.Errorf("take %d: the codes differ from the take with every expert on the device at frame %d codebook %d (%d and %d frames)", i+1, f, cb, len(ref.codes[i]), len(capped.codes[i]))
		}
	}
}

// zeroRouters zeroes every layer's router in w's arena.
func zeroRouters(t *testing.T, dev *cuda.Device, w *cuda.DeviceWeights) {
	t.Helper()
	for i := range w.Weights.Layers {
		p := w.Weights.Layers[i].MoE.Router
		at, err := w.Tensor(p)
		if err != nil {
			t.Fatal(err)
		}
		dt, _ := w.Layout.Tensor(p)
		if err := dev.Run(func(q *cuda.Queue) error { return q.ZeroTensor(at, dt.Bytes()) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
}

// frameCounts is the frames of each take.
func frameCounts(codes [][][]int) []int {
	var n []int
	for _, c := range codes {
		n = append(n, len(c))
	}
	return n
}
