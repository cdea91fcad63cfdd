package speechapi

import (
	"testing"

	"proscenium/internal/jsonunits"
)

// TestRequestJSONSaysItsUnits: the request body's numbers say their units
// or count, except sample_rate (Hz), the name OpenAI-style speech servers
// accept, kept so that their clients work unchanged.
func TestRequestJSONSaysItsUnits(t *testing.T) {
	for _, p := range jsonunits.Check([]string{"speechBody.sample_rate"}, speechBody{}) {
		t.Error(p)
	}
}
