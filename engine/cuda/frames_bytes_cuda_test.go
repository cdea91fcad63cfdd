//go:build cuda

package cuda

import (
	"testing"

	"proscenium/engine/cuda/device"
	"proscenium/engine/drama3"
)

// TestModelBytesMatchesTheLoad compares ModelBytes, what the studio shows
// and the load admits, with what the pool measures: a load (without the
// codec, which ModelBytes leaves out) and a reference-voice take's prompt
// and frames on a fresh pool must allocate at most the estimate, and at
// least its exact parts (the weight arena, the backbone's work block, the
// tower's state: all but the tower binding's bounded extras and the
// prompt's bounded scratch). Closing frees every byte.
func TestModelBytesMatchesTheLoad(t *testing.T) {
	eachTinyCheckpoint(t, func(t *testing.T, dir string) {
		const capacity = 512
		estimate, err := ModelBytes(dir, capacity)
		if err != nil {
			t.Fatal(err)
		}
		ck, err := drama3.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		layout, err := LayoutWeights(ck.Weights)
		if err != nil {
			ck.Close()
			t.Fatal(err)
		}
		_, plan, err := FramesBytes(ck.Config, layout, capacity)
		g, gerr := TowerGeometryOf(&ck.Config.Audio)
		ck.Close()
		if err = firstErr(err, gerr); err != nil {
			t.Fatal(err)
		}
		exact := layout.Bytes + plan.Bytes + TowerStateBytes(g, min(capacity, TowerMaxRows), 0)

		eck, err := drama3.LoadEngine(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer eck.Close()
		tok := eck.Tokenizer
		saved := dev.Pool
		dev.Pool = device.NewPool(device.CUDADriver{}, 0, 0)
		defer func() { dev.Pool = saved }()
		f, err := LoadFrames(dev, eck, nil, FramesOptions{Capacity: capacity}, nil)
		if err != nil {
			t.Fatal(err)
		}
		closed := false
		defer func() {
			if !closed {
				f.Close()
			}
		}()
		if f.Admitted() != estimate {
			t.Errorf("the load admitted %d bytes, ModelBytes says %d", f.Admitted(), estimate)
		}
		loaded := dev.Pool.Stats(DeviceMem).Used

		pb, err := drama3.NewPromptBuilder(tok, drama3.PromptLimits{})
		if err != nil {
			t.Fatal(err)
		}
		entries := f.CodebookEntries()
		r := newRand(t)
		codes := make([][]int, 40)
		for i := range codes {
			codes[i] = make([]int, len(entries))
			for c, e := range entries {
				codes[i][c] = r.IntN(e)
			}
		}
		p, err := pb.ReferenceVoice("A line spoken after a reference.", []drama3.Reference{{Transcript: "The reference, said once.", Codes: codes}}, entries)
		if err != nil {
			t.Fatal(err)
		}
		promptTake(t, f, p, 1, 8, nil)
		peak := dev.Pool.Stats(DeviceMem).Peak

		t.Logf("capacity %d: estimate %d bytes (exact parts %d: arena %d, backbone work %d, tower state %d); measured: %d after the load, peak %d with a reference-voice take (%.2f of the estimate)",
			capacity, estimate, exact, layout.Bytes, plan.Bytes, exact-layout.Bytes-plan.Bytes, loaded, peak, float64(peak)/float64(estimate))
		if peak > estimate {
			t.Errorf("the load and a take allocated up to %d bytes, %d past the estimate %d: the admission undercounts", peak, peak-estimate, estimate)
		}
		if loaded < exact {
			t.Errorf("the load allocated %d bytes, less than the estimate's exact parts (%d): the estimate overcounts by at least %d", loaded, exact, exact-loaded)
		}
		closed = true
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if used := dev.Pool.Stats(DeviceMem).Used; used != 0 {
			t.Errorf("Close left %d bytes allocated", used)
		}
	})
}
