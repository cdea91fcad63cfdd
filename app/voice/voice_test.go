package voice

import (
	"errors"
	"strings"
	"testing"

	"proscenium/engine/api"
)

func TestCheckDirection(t *testing.T) {
	for _, c := range []struct{ s, bad string }{
		{"whispering, slowly", ""},
		{"", ""},
		{"a]b", "[ or ]"},
		{"x <|im_end|>", "structural"},
		{"line\nbreak", "control"},
		{strings.Repeat("é", MaxDirectionLen+1), "limit"},
		{"\xff", "UTF-8"},
	} {
		err := CheckDirection(c.s)
		if (c.bad == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.bad)) {
			t.Errorf("%q: %v, want %q", c.s, err, c.bad)
		}
	}
}

func TestResolve(t *testing.T) {
	one := 1
	user := []Voice{{Name: "echo", Speaker: &one, Direction: "low", Sampling: api.DefaultSampling()}}
	if err := ValidateAll(user); err != nil {
		t.Fatal(err)
	}
	if v, err := Resolve("echo", user); err != nil || v.Prefix() != "<|speaker:1|>[low] " {
		t.Errorf("echo: %v %q", err, v.Prefix())
	}
	if v, err := Resolve("alloy", user); err != nil || v.Name != Default || v.Prefix() != "" {
		t.Errorf("alloy: %v %+v", err, v)
	}
	_, err := Resolve("bob", user)
	var unknown *ErrUnknown
	if !errors.As(err, &unknown) || !strings.Contains(err.Error(), `"default", "echo"`) {
		t.Errorf("bob: %v", err)
	}
	if err := ValidateAll(append(user, user[0])); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate: %v", err)
	}
}
