package script

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// The cases testdata/lines.json holds are checked here against Lines and
// in frontend/src/lib/lines.test.ts against splitLines: the studio's two
// splitters agree.
func TestLinesAsTheStudioSplitsThem(t *testing.T) {
	data, err := os.ReadFile("testdata/lines.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name   string `json:"name"`
		Script string `json:"script"`
		Lines  []Line `json:"lines"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got := Lines(c.Script)
		if len(got) == 0 && len(c.Lines) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.Lines) {
			t.Errorf("%s: %+v, want %+v", c.Name, got, c.Lines)
		}
	}
}
