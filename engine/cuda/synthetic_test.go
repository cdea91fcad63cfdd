package cuda

import (
	"os"
	"testing"

	"proscenium/engine/drama3"
)

func TestSyntheticWeightsFullGeometry(t *testing.T) {
	data, err := os.ReadFile("../drama3/testdata/drama3_full_shaped.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := drama3.ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	w, err := SyntheticWeights(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := LayoutWeights(w)
	if err != nil {
		t.Fatal(err)
	}
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
	if l.Bytes < l.StoredBytes() {
		t.Fatalf("arena %d bytes < stored %d", l.Bytes, l.StoredBytes())
	}
}
