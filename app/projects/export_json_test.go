package projects

import (
	"encoding/json"
	"strings"
	"testing"

	"proscenium/engine/api"
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
		// Saved before trim_silence existed: its scene keeps every sample, as it did.
		if p.Export.GapSeconds != 0.75 || p.Export.TargetLUFS != -16 || p.Export.Format != "wav" || p.Export.TrimSilence {
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

// TestNewProjectsTrimSilence: a new project's scene trims each take's
// silent ends, and says so in its file.
func TestNewProjectsTrimSilence(t *testing.T) {
	p := New("x", api.DefaultSampling(), 0, 0)
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Parse(b)
	if err != nil || !q.Export.TrimSilence || !strings.Contains(string(b), `"trim_silence":true`) {
		t.Errorf("a new project: %+v, %v; written %s", q.Export, err, b)
	}
}
