package jsonunits

import (
	"strings"
	"testing"
	"time"
)

type inner struct {
	Wait    time.Duration            `json:"wait"`
	Stages  map[string]time.Duration `json:"stages_s"`
	Elapsed float64                  `json:"elapsed"`
}

type sample struct {
	Frames   int              `json:"frames"`
	LoadS    float64          `json:"load_s"`
	Used     int64            `json:"used"`
	Data     []byte           `json:"data"`
	Hidden   time.Duration    `json:"-"`
	Inner    *inner           `json:"inner"`
	List     []inner          `json:"list"` // walked once
	ByName   map[string]inner `json:"by_name"`
	Allowed  float64          `json:"noise"`
	Untagged int
	Rates    map[string]float64 `json:"rates_per_s"`
}

// TestCheckFindsBareNumbersAndDurations: the walk reports every
// time.Duration (also in a map) and every number whose name has no unit,
// through pointers, and nothing that says its unit, is unitless, []byte,
// skipped or allowed.
func TestCheckFindsBareNumbersAndDurations(t *testing.T) {
	got := Check([]string{"sample.noise"}, sample{})
	var paths []string
	for _, p := range got {
		paths = append(paths, p.Path)
	}
	want := []string{"jsonunits.sample.Untagged", "jsonunits.sample.inner.elapsed", "jsonunits.sample.inner.stages_s", "jsonunits.sample.inner.wait", "jsonunits.sample.used"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("problems %v, want %v", got, want)
	}
}

// TestCheckDecoded: in decoded JSON, numbers whose keys have no unit are
// reported, nested too; strings and unit-named numbers are not.
func TestCheckDecoded(t *testing.T) {
	got, err := CheckDecoded([]byte(`{"type":"done","time_to_first_audio_ms":3.5,"audio_frames":4,"usage":{"output_tokens":4,"elapsed":2},"list":[{"size":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Path != "$.list[].size" || got[1].Path != "$.usage.elapsed" {
		t.Errorf("problems %v", got)
	}
	if got, _ := CheckDecoded([]byte(`{"size":1}`), "size"); len(got) != 0 {
		t.Errorf("allowed key reported: %v", got)
	}
	if _, err := CheckDecoded([]byte(`{`)); err == nil {
		t.Error("bad JSON accepted")
	}
}
