package app

import (
	"errors"
	"strings"
	"testing"

	"proscenium/engine"
)

// countingEngine counts a token per byte: enough to see that the count
// comes from the loaded engine.
type countingEngine struct{ testEngine }

func (*countingEngine) CountTokens(text string) (int, error) { return len(text), nil }

// The script's token count goes through the loaded engine; an engine that
// cannot count says so, and no model is ErrNoModel.
func TestCountTokensAsksTheEngine(t *testing.T) {
	for _, c := range []struct {
		name string
		eng  engine.Engine
		want string
	}{
		{"counting engine", &countingEngine{}, ""},
		{"engine without a count", &testEngine{}, "cannot count tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc, err := New(Config{Open: func(string) (engine.Engine, error) { return c.eng, nil }})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.CountTokens("Hello."); !errors.Is(err, ErrNoModel) {
				t.Fatalf("no model: error %v", err)
			}
			if _, err := svc.LoadModel(t.TempDir()); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { return svc.ModelStatus().State == ModelLoaded })
			n, err := svc.CountTokens("Hello.")
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want %q", err, c.want)
				}
				return
			}
			if err != nil || n.Tokens != 6 || n.Model != "test" {
				t.Fatalf("count %+v, err %v", n, err)
			}
		})
	}
}
