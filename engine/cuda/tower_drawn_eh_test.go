package cuda

import (
	"testing"
)

// TestTowerEHLayout: the tables' block holds every table layer's W_h
// (BF16 [Dim, Dim]) and T (float32 [Entries, Dim]) 256-byte aligned and
// apart, the drawn layers' by residual layer and the code-0 layers' (the
// shared ones and the first residual one, codebook 0) by tower layer; at
// Drama 3's geometry 134.2 MB for the drawn layers and 209.7 MB more with
// the code-0 layers; none under towerEHOff, no code-0 ones under
// towerEH0Off.
func TestTowerEHLayout(t *testing.T) {
	g := fullTowerGeometry(t)
	D := int64(g.Dim)
	type span struct{ off, end int64 }
	check := func(mode towerEHMode, mode0 towerEH0Mode, wantDrawn, wantCode0 int, wantMB float64) {
		t.Helper()
		l := towerDrawnEHLayout(g, mode, mode0)
		var spans []span
		add := func(what string, p towerDrawnPlace, entries int) {
			if p.wh%256 != 0 || p.tab%256 != 0 {
				t.Errorf("%s: W_h at %d, T at %d: not 256-byte aligned", what, p.wh, p.tab)
			}
			spans = append(spans, span{p.wh, p.wh + D*D*2}, span{p.tab, p.tab + int64(entries)*D*4})
		}
		drawn, code0 := 0, 0
		for _, i := range towerDrawnLayers(g) {
			if l.drawn == nil {
				break
			}
			add("drawn", l.drawn[i], g.Entries[i])
			drawn++
		}
		if l.code0 != nil {
			for _, li := range towerCode0Layers(g) {
				add("code 0", l.code0[li], g.Entries[0])
				code0++
			}
		}
		if drawn != wantDrawn || code0 != wantCode0 {
			t.Fatalf("modes %d/%d: %d drawn and %d code-0 layers placed, want %d and %d", mode, mode0, drawn, code0, wantDrawn, wantCode0)
		}
		for a := range spans {
			if spans[a].end > l.size {
				t.Errorf("modes %d/%d: a table ends at %d past the block's %d bytes", mode, mode0, spans[a].end, l.size)
			}
			for b := range a {
				if spans[a].off < spans[b].end && spans[b].off < spans[a].end {
					t.Errorf("modes %d/%d: tables [%d, %d) and [%d, %d) overlap", mode, mode0, spans[a].off, spans[a].end, spans[b].off, spans[b].end)
				}
			}
		}
		if mb := float64(l.size) / 1e6; mb < wantMB-0.1 || mb > wantMB+0.1 {
			t.Errorf("modes %d/%d: %.1f MB of tables, want %.1f", mode, mode0, mb, wantMB)
		}
	}
	check(towerEHMerged, towerEH0Merged, g.ResidualLayers()-1, g.SharedLayers+1, 343.9)
	check(towerEHSplit, towerEH0After, g.ResidualLayers()-1, g.SharedLayers+1, 343.9)
	check(towerEHMerged, towerEH0Off, g.ResidualLayers()-1, 0, 134.2)
	check(towerEHOff, towerEH0Merged, 0, 0, 0)
}

// TestParseTowerEHModes: the switches' values, and a clear refusal of
// others.
func TestParseTowerEHModes(t *testing.T) {
	for s, want := range map[string]towerEHMode{"": towerEHMerged, "merged": towerEHMerged, "split": towerEHSplit, "off": towerEHOff} {
		if got, err := parseTowerEHMode(s); err != nil || got != want {
			t.Errorf("parseTowerEHMode(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for s, want := range map[string]towerEH0Mode{"": towerEH0Merged, "merged": towerEH0Merged, "after": towerEH0After, "off": towerEH0Off} {
		if got, err := parseTowerEH0Mode(s); err != nil || got != want {
			t.Errorf("parseTowerEH0Mode(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	if _, err := parseTowerEHMode("on"); err == nil {
		t.Error("PROSCENIUM_GPU_TOWER_EH=on accepted")
	}
	if _, err := parseTowerEH0Mode("split"); err == nil {
		t.Error("PROSCENIUM_GPU_TOWER_EH0=split accepted")
	}
}
