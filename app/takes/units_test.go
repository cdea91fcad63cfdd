package takes

import (
	"testing"

	"proscenium/internal/jsonunits"
)

// TestTakeFileSaysItsUnits: take.json's numbers say their units or count.
func TestTakeFileSaysItsUnits(t *testing.T) {
	for _, p := range jsonunits.Check(nil, takeFile{}) {
		t.Error(p)
	}
}
