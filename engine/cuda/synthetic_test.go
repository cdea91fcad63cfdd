package cuda

import (
	"os"
	"testing"

	"proscenium/engine/drama3"
)

// shapedLayout is the config in the repository file rel (repoPath) and the
// device layout of its shaped weights (drama3.ShapedWeights: shapes, no
// bytes).
func shapedLayout(t *testing.T, rel string) (*drama3.Config, *WeightLayout) {
	t.Helper()
	data, err := os.ReadFile(repoPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := drama3.ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	w, err := drama3.ShapedWeights(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := LayoutWeights(w)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, l
}

func TestSyntheticWeightsFullGeometry(t *testing.T) {
	cfg, l := shapedLayout(t, "engine/drama3/testdata/drama3_full_shaped.json")
	x := l.Experts[0]
	if !x.FP8 || x.P != 512 || x.Hp != 2048 || x.Ip != 512 || len(l.Experts) != 40 {
		t.Fatalf("expert pack %+v, %d layers", x, len(l.Experts))
	}
	plan, err := PlanBackbone(cfg, x, 2048)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("full geometry: arena %.2f GiB (stored %.2f GiB), work block %.1f MiB for 2048 rows",
		float64(l.Bytes)/(1<<30), float64(l.StoredBytes())/(1<<30), float64(plan.Bytes)/(1<<20))
	// A step reads every dense matrix once and 8 of 256 experts per layer:
	// about 3.9 GB at this geometry (the figure).
	sb := plan.StepBytes(cfg, x, 60)
	t.Logf("a step at position 60 reads %.3f GB", float64(sb)/1e9)
	if sb < 3.7e9 || sb > 4.1e9 {
		t.Fatalf("step bytes %d, want about 3.9 GB", sb)
	}
	// The work block's regions do not overlap: each starts after the last
	// (the two mixers share one: a layer runs one of them).
	if plan.AttentionScratch != plan.DeltaNetScratch {
		t.Fatalf("attention scratch at %d, DeltaNet scratch at %d: want one region", plan.AttentionScratch, plan.DeltaNetScratch)
	}
	offs := []int64{plan.X, plan.NormedMix, plan.MixOut, plan.NormedMoE, plan.Dense, plan.Ids, plan.Wts, plan.XRep, plan.GU,
		plan.Hid, plan.HidS, plan.YR, plan.YS, plan.Toks, plan.Emb, plan.Out, plan.Pos, plan.Offsets, plan.RowIds, plan.Slot,
		plan.DeltaNetScratch}
	for i := 1; i < len(offs); i++ {
		if offs[i] <= offs[i-1] || offs[i]%arenaAlign != 0 {
			t.Fatalf("work region %d at %d after %d", i, offs[i], offs[i-1])
		}
	}
	if offs[0] < plan.StateBytes || plan.Bytes <= offs[len(offs)-1] {
		t.Fatalf("scratch %d…%d outside the block after the states (%d of %d)", offs[0], offs[len(offs)-1], plan.StateBytes, plan.Bytes)
	}
	if l.Bytes < l.StoredBytes() {
		t.Fatalf("arena %d bytes < stored %d", l.Bytes, l.StoredBytes())
	}
}
