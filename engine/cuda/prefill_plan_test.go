package cuda

import (
	"fmt"
	"strings"
	"testing"
)

// The rows of a prefill pass the load plans (PrefillPassRows, pass13): the
// long pass where the whole model fits the device, 512 rows where memory is
// short, the variables that set it.

// fullGeometryPassTier is fullGeometryTier with prefill passes of rows rows:
// the tier input LoadFrames plans with (one take, the default context, a
// codec allowance, the default voice cache).
func fullGeometryPassTier(t *testing.T, rows int) TierInput {
	t.Helper()
	cfg, layout := shapedLayout(t, fullGeometryJSON)
	n, plan, err := FramesPassBytes(cfg, layout, 0, 1, rows)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Chunk != rows {
		t.Fatalf("passes of %d rows planned as %d", rows, plan.Chunk)
	}
	in := TierModel(cfg, layout, n+codecAllowance)
	in.VoiceCache = DefaultPrefixCacheBytes
	return in
}

// TestPrefillPassRowsCards is the pass the auto plan takes for the full
// model on the cards of TestPlanTierCards: 2048 rows wherever every expert
// stays on the device with it (48 and 80 GB cards, the H200), 512 rows —
// the very tier of the fixed plan — on 24 and 32 GB cards and under the
// caps that mimic them; between, under a cap just short of the 2048-row
// model, 1024. The fixed plan is 512 everywhere. A longer pass never moves
// a layer's experts to the host or refuses a load the fixed plan admits.
func TestPrefillPassRowsCards(t *testing.T) {
	if prefillRowsSet {
		t.Skipf("$%s is set: it overrides the plan", PrefillRowsEnv)
	}
	in := map[int]TierInput{}
	for _, rows := range []int{DefaultPrefillRows, 1024, LongPrefillRows} {
		in[rows] = fullGeometryPassTier(t, rows)
	}
	short := in[DefaultPrefillRows].ModelBytes
	long := in[LongPrefillRows].ModelBytes
	perRow := float64(long-short) / float64(LongPrefillRows-DefaultPrefillRows)
	t.Logf("full model (a 1 GiB codec allowance) with 512-row passes %.2f GiB, 1024 %.2f GiB, 2048 %.2f GiB: %.3f MiB a row more",
		float64(short)/float64(gibi), float64(in[1024].ModelBytes)/float64(gibi), float64(long)/float64(gibi), perRow/(1<<20))
	if perRow < 0.2*(1<<20) || perRow > 0.45*(1<<20) {
		t.Errorf("%.3f MiB of scratch a pass row; docs/PERF.md says ≈ 0.3", perRow/(1<<20))
	}
	// A cap under which the 1024-row model and its voice cache fit but the
	// 2048-row one does not.
	cap1024 := in[1024].ModelBytes + DefaultPrefixCacheBytes + (long-in[1024].ModelBytes)/2
	cases := []struct {
		name      string
		free, cap int64
		rows      int
	}{
		{"24 GB card (RTX 3090/4090)", 23*gibi + gibi/2, 0, DefaultPrefillRows},
		{"32 GB card (RTX 5090)", 31*gibi + gibi*3/10, 0, DefaultPrefillRows},
		{"48 GB card (RTX 6000 Ada)", 47*gibi + gibi*3/10, 0, LongPrefillRows},
		{"80 GB card (A100/H100)", 79*gibi + gibi/5, 0, LongPrefillRows},
		{"H200 uncapped", 139 * gibi, 0, LongPrefillRows},
		{"H200 under a 30 GiB cap", 139 * gibi, 30 * gibi, DefaultPrefillRows},
		{"H200 under a 22 GiB cap", 139 * gibi, 22 * gibi, DefaultPrefillRows},
		{"H200 under a cap a byte below the 512-row model", 139 * gibi, short - 1, DefaultPrefillRows},
		{"H200 under a cap the 512-row model and voice cache just fit", 139 * gibi, short + DefaultPrefixCacheBytes, DefaultPrefillRows},
		{"H200 under a cap for the 1024-row model", 139 * gibi, cap1024, 1024},
		{"H200 under a cap the 2048-row model and voice cache just fit", 139 * gibi, long + DefaultPrefixCacheBytes, LongPrefillRows},
	}
	for _, c := range cases {
		at := func(rows int) TierInput {
			x := in[rows]
			x.DeviceFree, x.Cap, x.Headroom = c.free, c.cap, DefaultHeadroom
			x.HostAvailable, x.HostReserve = 64*gibi, DefaultHostReserve
			return x
		}
		var asked []int
		whole := func(rows int) (bool, error) {
			asked = append(asked, rows)
			x := at(rows)
			p, err := PlanTier(x)
			return err == nil && WholeOnDevice(p, x.VoiceCache), nil
		}
		fixed, err := prefillPassRows(PrefillPlanFixed, 8, whole)
		if err != nil || fixed != DefaultPrefillRows || len(asked) != 0 {
			t.Errorf("%s: the fixed plan took %d rows (%v), asking %v", c.name, fixed, err, asked)
		}
		rows, err := prefillPassRows(PrefillPlanAuto, 8, whole)
		if err != nil {
			t.Fatal(err)
		}
		if rows != c.rows {
			t.Errorf("%s: passes of %d rows, want %d (asked %v)", c.name, rows, c.rows, asked)
		}
		old, oldErr := PlanTier(at(DefaultPrefillRows))
		p, err := PlanTier(at(rows))
		if (err != nil) != (oldErr != nil) {
			t.Errorf("%s: with %d-row passes the plan errs %v, with 512 %v", c.name, rows, err, oldErr)
			continue
		}
		if err != nil {
			continue
		}
		if p.Tier != old.Tier || p.DeviceLayers != old.DeviceLayers || p.VoiceCache < old.VoiceCache {
			t.Errorf("%s: %d-row passes give %v with %d device layers and a %d-byte voice cache; 512 gave %v, %d, %d",
				c.name, rows, p.Tier, p.DeviceLayers, p.VoiceCache, old.Tier, old.DeviceLayers, old.VoiceCache)
		}
		p.PrefillRows = rows
		if !strings.Contains(p.String(), fmt.Sprintf("prefill passes of %d rows", rows)) {
			t.Errorf("%s: %q does not say its passes", c.name, p)
		}
		t.Logf("%s: %s", c.name, p)
	}
}

// TestPrefillPassRowsErr: an error planning a pass is the rule's error; a
// model of more experts a row tries only the passes whose pairs the
// grouping takes (top 10: 1024 rows, not 2048; top 32: none, so 512).
func TestPrefillPassRowsErr(t *testing.T) {
	if prefillRowsSet {
		t.Skipf("$%s is set", PrefillRowsEnv)
	}
	bad := fmt.Errorf("no layout")
	if _, err := prefillPassRows(PrefillPlanAuto, 8, func(int) (bool, error) { return false, bad }); err != bad {
		t.Errorf("error %v, want %v", err, bad)
	}
	for _, c := range []struct{ topK, rows int }{{8, LongPrefillRows}, {10, 1024}, {16, 1024}, {17, DefaultPrefillRows}, {32, DefaultPrefillRows}} {
		var asked []int
		rows, err := prefillPassRows(PrefillPlanAuto, c.topK, func(r int) (bool, error) { asked = append(asked, r); return true, nil })
		if err != nil || rows != c.rows {
			t.Errorf("top %d: passes of %d rows (%v), want %d; asked %v", c.topK, rows, err, c.rows, asked)
		}
	}
}

// TestPlanBackbonePassLimits is the plan's pass at the full geometry: a
// pass is capped at the context, 2048 rows of top 8 are the grouping's
// most pairs, and a pass past them is refused at the plan (not at the
// kernel's launch). The scratch figures are docs/PERF.md "pass13"'s.
func TestPlanBackbonePassLimits(t *testing.T) {
	cfg, layout := shapedLayout(t, fullGeometryJSON)
	x := layout.Experts[0]
	for _, c := range []struct{ capacity, rows, chunk int }{
		{4096, 512, 512}, {4096, 1024, 1024}, {4096, LongPrefillRows, LongPrefillRows},
		{785, LongPrefillRows, 785}, {300, DefaultPrefillRows, 300},
	} {
		p, err := PlanBackbonePass(cfg, x, c.capacity, 1, c.rows)
		if err != nil {
			t.Fatal(err)
		}
		if p.Chunk != c.chunk {
			t.Errorf("context %d, passes of %d: chunk %d, want %d", c.capacity, c.rows, p.Chunk, c.chunk)
		}
		if p.MixerRows() != min(p.Chunk, BackboneChunk) && mixerRows == BackboneChunk {
			t.Errorf("passes of %d rows: attention blocks of %d rows", p.Chunk, p.MixerRows())
		}
		t.Logf("context %d, passes of %d rows: scratch %.1f MiB (%.3f MiB a row), states %.1f MiB",
			c.capacity, p.Chunk, float64(p.ScratchBytes)/(1<<20), float64(p.ScratchBytes)/float64(p.Chunk)/(1<<20), float64(p.StateBytes)/(1<<20))
	}
	if _, err := PlanBackbonePass(cfg, x, 8192, 1, 2*LongPrefillRows); err == nil || !strings.Contains(err.Error(), "pairs") {
		t.Errorf("passes of %d rows of top 8: %v, want the grouping's limit", 2*LongPrefillRows, err)
	}
	if _, err := PlanBackbonePass(cfg, x, 4096, 1, 0); err == nil {
		t.Error("passes of 0 rows planned")
	}
}

// TestPrefillRowsFromEnv: a $PROSCENIUM_GPU_PREFILL_ROWS that is no
// positive multiple of BackboneChunk, and a $PROSCENIUM_GPU_PREFILL_PLAN
// that names no plan, are reported and leave the defaults.
func TestPrefillRowsFromEnv(t *testing.T) {
	for _, c := range []struct {
		v    string
		rows int
		set  bool
	}{{"", DefaultPrefillRows, false}, {"2048", 2048, true}, {"64", 64, true}, {"700", DefaultPrefillRows, false},
		{"0", DefaultPrefillRows, false}, {"-64", DefaultPrefillRows, false}, {"auto", DefaultPrefillRows, false}} {
		var w strings.Builder
		rows, set := rowsFrom(&w, PrefillRowsEnv, c.v, DefaultPrefillRows)
		reported := strings.Contains(w.String(), PrefillRowsEnv) && strings.Contains(w.String(), "ignored")
		if rows != c.rows || set != c.set || reported != (c.v != "" && !c.set) {
			t.Errorf("%s=%q: %d rows, set %v, report %q", PrefillRowsEnv, c.v, rows, set, w.String())
		}
	}
	for _, c := range []struct{ v, plan string }{{"", defaultPrefillPlan}, {"auto", PrefillPlanAuto}, {"fixed", PrefillPlanFixed},
		{"AUTO", defaultPrefillPlan}, {"2048", defaultPrefillPlan}} {
		var w strings.Builder
		plan := prefillPlanFrom(&w, c.v)
		reported := strings.Contains(w.String(), PrefillPlanEnv)
		if plan != c.plan || reported != (c.v != "" && c.v != PrefillPlanAuto && c.v != PrefillPlanFixed) {
			t.Errorf("%s=%q: plan %q, report %q", PrefillPlanEnv, c.v, plan, w.String())
		}
	}
}

func TestEmbeddingSpan(t *testing.T) {
	for _, c := range []struct {
		toks       []int32
		first, end int
	}{
		{[]int32{5, 6, 7}, 0, 0},
		{[]int32{-1}, 0, 1},
		{[]int32{3, -1, 4, -1, 9}, 1, 4},
		{[]int32{-1, 2, 2, -1}, 0, 4},
		{nil, 0, 0},
	} {
		if f, e := embeddingSpan(c.toks); f != c.first || e != c.end {
			t.Errorf("embeddingSpan(%v) = %d, %d; want %d, %d", c.toks, f, e, c.first, c.end)
		}
	}
}
