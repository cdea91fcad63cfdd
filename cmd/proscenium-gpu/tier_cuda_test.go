//go:build cuda

package main

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"proscenium/engine/api"
	"proscenium/engine/cuda"
	"proscenium/engine/cuda/device"
	"proscenium/engine/drama3"
	"proscenium/engine/gpuworker"
)

// TestCUDAEngineTiers: the memory tier changes where the routed experts'
// bytes live, not the arithmetic. A demo checkpoint's take under caps that
// put the experts of 3, 2, 1 and 0 of its 4 layers in the arena (the rest
// in pinned host memory, read by the kernels over the bus in a step and
// copied to the prefill stage, one layer's worth of device memory, in a
// prefill; the last layer's read from the stage in a step; the token
// embedding and LM head in pinned host memory too) has the uncapped take's
// codes and PCM bits (the same kernels on the same bytes, so under either
// numerics policy), whatever the expert cache moved meanwhile; a cap below the dense part and the stage, and a host
// without the memory for the pinned weights are refused with the numbers,
// leaving nothing allocated on the device or pinned.
func TestCUDAEngineTiers(t *testing.T) {
	dir, dev := tinyOnDevice(t)
	for _, policy := range []drama3.Numerics{drama3.NumericsExact, drama3.NumericsFast} {
		t.Run(string(policy), func(t *testing.T) {
			dev.Numerics = policy
			checkTiers(t, dev, dir)
		})
	}
}

// checkTiers is TestCUDAEngineTiers under dev's numerics policy.
func checkTiers(t *testing.T, dev *cuda.Device, dir string) {
	ctx := context.Background()
	req := api.SpeechRequest{Text: "Hello there, this is a take made on the GPU.", Seed: 5, MaxFrames: 200,
		Sampling: api.Sampling{Temperature: 1, TopP: 0.9, TopK: 30}}
	nothingHeld := func(when string) {
		t.Helper()
		for _, k := range []device.MemKind{cuda.DeviceMem, cuda.PinnedMem, cuda.HostTierMem} {
			if used := dev.Pool.Stats(k).Used; used != 0 {
				t.Fatalf("%s: %d bytes of %s memory left allocated", when, used, k)
			}
		}
	}
	type run struct {
		codes    [][]int
		pcm      []float32
		tier     *api.ExpertTier
		admitted int64 // device bytes the load admitted (with the codec)
	}
	take := func(capBytes int64) (run, error) {
		t.Helper()
		dev.Pool.SetCap(cuda.DeviceMem, capBytes)
		defer dev.Pool.SetCap(cuda.DeviceMem, 0)
		e, err := openCUDAEngine(ctx, dev, gpuworker.LoadRequest{Model: dir, Batch: 1, VoiceCacheBytes: cuda.DefaultPrefixCacheBytes}, "test", nil) // one take, the default cache: ModelTierInput(dir, 0, 1) below
		if err != nil {
			nothingHeld("a refused load")
			return run{}, err
		}
		r := run{admitted: e.(cudaEngine).frames.all[0].Admitted()}
		fin, err := e.Synthesize(ctx, req, func(ev api.Event) {
			if ev.Kind == api.EventAudio {
				r.pcm = append(r.pcm, ev.Audio.PCM...)
			}
		})
		r.tier = e.Stats().Memory.Experts
		if cerr := e.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		nothingHeld("a closed engine")
		r.codes = fin.Codes
		return r, nil
	}

	whole, err := take(0)
	if err != nil {
		t.Fatal(err)
	}
	if x := whole.tier; x == nil || x.Tier != cuda.TierDevice.String() || x.HostBytes != 0 || x.HitRate != 1 || x.Layers != 4 {
		t.Fatalf("uncapped readout %+v", x)
	}
	// Under the auto prefill plan the uncapped load takes longer passes
	// where the device has room (cuda.PrefillPassRows); a cap a byte below
	// what it admitted makes a load take shorter ones (their scratch MiBs
	// less), the whole model still on the device, before any expert leaves
	// it. At the shortest passes a byte less only shrinks the voice cache.
	// The tiers below are those of the shortest passes: their whole is the
	// reference.
	for {
		r, err := take(whole.admitted - 1)
		if err != nil {
			t.Fatal(err)
		}
		if x := r.tier; x == nil || x.Tier != cuda.TierDevice.String() || whole.admitted-r.admitted < 1<<20 {
			break
		}
		t.Logf("a cap a byte below %d bytes: shorter passes, %d bytes, every expert on the device", whole.admitted, r.admitted)
		whole = r
	}
	in, err := cuda.ModelTierInput(dir, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The load admits the codec besides ModelTierInput's bytes: the whole is
	// what the uncapped load admitted, less the voice cache, which it grants
	// in full on a device with room (cuda.PlanTier) and never under the
	// host tier (there it gets pinned host memory). Under the host tier the dense part leaves the embedding
	// and LM head (HostDense) in host memory and adds the stage.
	admitted, layer := whole.admitted-cuda.DefaultPrefixCacheBytes, in.LayerExperts[0]
	if in.HostDense <= 0 {
		t.Fatalf("no dense tensors to keep in host memory: %+v", in)
	}
	// A byte short of the whole: the tower's drawn-code tables give way
	// before any expert (cuda.TowerDrawnEHBytes). That take is the reference
	// of the host tiers below, which leave the tables out too: with them a
	// take's tower values are the same within float32 rounding, not bit for
	// bit, so its codes may leave the whole's at a draw's near-tie.
	tables := towerDrawnTables(t, dir)
	ref, err := take(admitted - 1)
	if err != nil {
		t.Fatal(err)
	}
	if x := ref.tier; tables <= 0 || x == nil || x.Tier != cuda.TierDevice.String() || x.HostBytes != 0 || x.Layers != 4 {
		t.Fatalf("a cap a byte below the whole (%d bytes of tower tables): readout %+v", tables, x)
	}
	if f, cb := firstCodeDiff(whole.codes, ref.codes); f >= 0 {
		t.Logf("without the tower's tables the codes leave the whole's at frame %d codebook %d (float32 rounding at a draw)", f, cb)
	}
	// The host tiers' dense part: the whole less the tables, the experts and
	// the host-capable dense tensors, with the stage; the expert cache's
	// table and statistics are on the device too.
	admitted -= tables
	dense := admitted - 4*layer - in.HostDense + layer + cuda.ExpertCacheBytes(4, in.Experts)
	for _, c := range []struct {
		capBytes    int64
		arenaLayers int
	}{{admitted - 1, 3}, {dense + 2*layer, 2}, {dense + layer, 1}, {dense, 0}} {
		r, err := take(c.capBytes)
		if err != nil {
			t.Fatalf("cap %d (dense and stage %d, a layer's experts %d): %v", c.capBytes, dense, layer, err)
		}
		x, read := r.tier, c.arenaLayers+1
		if x == nil || x.Tier != cuda.TierHostExperts.String() || x.DeviceLayers != read || x.HostBytes != int64(4-c.arenaLayers)*layer ||
			math.Abs(x.HitRate-float64(read)/4) > 1e-12 || (x.BusBytesPerFrame > 0) != (read < 4) {
			t.Errorf("cap %d: readout %+v, want the experts of %d layers in the arena and one on the stage", c.capBytes, x, c.arenaLayers)
		}
		// The expert cache ran every step: each routed pair counted once,
		// as a hit or a miss; whatever it promoted, the codes below stay.
		if cc := x.Cache; cc == nil || cc.Total != 4*in.Experts || cc.Hits+cc.Misses == 0 || cc.Resident < cc.Slots || cc.Slots != c.arenaLayers*in.Experts {
			t.Errorf("cap %d: expert cache %+v", c.capBytes, cc)
		} else {
			t.Logf("cap %d: %+v; cache %+v", c.capBytes, x, *cc)
		}
		if f, cb := firstCodeDiff(ref.codes, r.codes); f >= 0 {
			t.Errorf("cap %d (%d arena layers): the codes differ from the take without tables' at frame %d codebook %d", c.capBytes, c.arenaLayers, f, cb)
		}
		if i := firstBitDiff(ref.pcm, r.pcm); i >= 0 {
			t.Errorf("cap %d (%d arena layers): the PCM differs from the take without tables' at sample %d", c.capBytes, c.arenaLayers, i)
		}
	}

	// Refusals, with the numbers, nothing left allocated (take checks).
	if _, err := take(dense - 1); !errors.Is(err, cuda.ErrDoesNotFit) || !errors.Is(err, cuda.ErrOverCap) ||
		!strings.Contains(err.Error(), "even with every routed expert in host memory") || !strings.Contains(err.Error(), "MiB") {
		t.Errorf("a cap a byte below the dense part and the stage: %v", err)
	}
	host, err := cuda.HostMemAvailable()
	if err != nil {
		t.Fatal(err)
	}
	// Nothing left for the pinned experts, however much the host frees
	// meanwhile (MemAvailable moves between two reads: a reserve of just
	// what the host had passed once on the H200, under fast).
	dev.HostReserve = host + 1<<40
	_, err = take(dense)
	dev.HostReserve = 0
	if !errors.Is(err, cuda.ErrDoesNotFit) || !strings.Contains(err.Error(), "available") || !strings.Contains(err.Error(), "in host memory (pinned") {
		t.Errorf("a host without memory for the pinned experts: %v", err)
	}
}
