package projects

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExportReadsGapSeconds: a project.json written before the gap said
// its unit (gap_seconds) reads the same gap as one with gap_s, an unknown
// field in the export settings is still refused, and a project is written
// with gap_s only.
func TestExportReadsGapSeconds(t *testing.T) {
	const doc = `{"format":1,"name":"x","sampling":{"temperature":1,"top_p":1,"top_k":0},"export":{%s,"target_lufs":-16,"format":"wav"}}`
	for _, gap := range []string{`"gap_seconds":0.75`, `"gap_s":0.75`} {
		p, err := Parse([]byte(strings.Replace(doc, "%s", gap, 1)))
		if err != nil {
			t.Fatalf("%s: %v", gap, err)
		}
		if p.Export.GapSeconds != 0.75 || p.Export.TargetLUFS != -16 || p.Export.Format != "wav" {
			t.Errorf("%s: export %+v", gap, p.Export)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"gap_s":0.75`) || strings.Contains(string(b), "gap_seconds") {
			t.Errorf("written %s", b)
		}
	}
	if _, err := Parse([]byte(strings.Replace(doc, "%s", `"gap_s":0.75,"gap_minutes":1`, 1))); err == nil {
		t.Error("an unknown export field accepted")
	}
}
