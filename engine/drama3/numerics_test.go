package drama3

import (
	"strings"
	"testing"
)

func TestParseNumerics(t *testing.T) {
	for in, want := range map[string]Numerics{"": NumericsFast, "fast": NumericsFast, "exact": NumericsExact} {
		got, err := ParseNumerics(in)
		if err != nil || got != want {
			t.Errorf("ParseNumerics(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"Fast", "f64", "exact ", "bits"} {
		_, err := ParseNumerics(in)
		if err == nil || !strings.Contains(err.Error(), "want fast") || !strings.Contains(err.Error(), in) {
			t.Errorf("ParseNumerics(%q) error = %v; want a refusal naming the value and the choices", in, err)
		}
	}
	var n Numerics
	if err := n.Set("exact"); err != nil || n != NumericsExact {
		t.Errorf("Set(exact) = %q, %v", n, err)
	}
	if err := n.Set("fastest"); err == nil || n != NumericsExact {
		t.Errorf("Set(fastest) = %q, %v; want a refusal that leaves exact", n, err)
	}
	if Numerics("").String() != "fast" || !NumericsExact.Exact() || NumericsFast.Exact() {
		t.Error("zero value is not fast, or Exact() is wrong")
	}
}
