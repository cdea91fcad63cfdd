package app

import (
	"errors"
	"strings"
	"testing"

	"proscenium/app/model"
	"proscenium/app/studio"
	"proscenium/engine/api"
	"proscenium/engine/drama3"
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
		eng  api.Engine
		want string
	}{
		{"counting engine", &countingEngine{}, ""},
		{"engine without a count", &testEngine{}, "cannot count tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc, err := New(Config{Open: func(string) (api.Engine, error) { return c.eng, nil }})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.CountTokens("Hello."); !errors.Is(err, studio.ErrNoModel) {
				t.Fatalf("no model: error %v", err)
			}
			if _, err := svc.LoadModel(t.TempDir()); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { return svc.ModelStatus().State == model.ModelLoaded })
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

// checkingEngine refuses the made-up token <|x|> wherever it occurs.
type checkingEngine struct{ testEngine }

func (*checkingEngine) CheckText(text string) error {
	if i := strings.Index(text, "<|x|>"); i >= 0 {
		return &drama3.TextError{Offset: i, Token: "<|x|>", Reason: "not in this model"}
	}
	return nil
}

// With a model loaded, the script check asks the engine, so the loaded
// model's own rules mark the script.
func TestCheckScriptAsksTheEngine(t *testing.T) {
	svc, err := New(Config{Open: func(string) (api.Engine, error) { return &checkingEngine{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return svc.ModelStatus().State == model.ModelLoaded })
	c, err := svc.CheckScript("ab<|x|>cd<|x|>")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Tokenizer || len(c.Problems) != 2 || c.Problems[0].Start != 2 || c.Problems[1].Start != 9 || c.Problems[1].Token != "<|x|>" {
		t.Fatalf("check %+v", c)
	}
}

// brokenChecker is an engine whose script check fails (a worker that died).
type brokenChecker struct{ testEngine }

func (*brokenChecker) CheckText(string) error { return errors.New("engine worker not running") }

// When the engine cannot check, the script check falls back to the prompt's
// structure rules and says the tokenizer took no part: never "no problems"
// from a check that did not run.
func TestCheckScriptWhenTheEngineCannot(t *testing.T) {
	svc, err := New(Config{Open: func(string) (api.Engine, error) { return &brokenChecker{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return svc.ModelStatus().State == model.ModelLoaded })
	c, err := svc.CheckScript("Hello <|im_end|> there.")
	if err != nil {
		t.Fatal(err)
	}
	if c.Tokenizer || len(c.Problems) != 1 || c.Problems[0].Token != "<|im_end|>" {
		t.Fatalf("check %+v, want the structural problem found without the tokenizer", c)
	}
}
