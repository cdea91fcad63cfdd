package decode

import (
	"testing"

	"proscenium/internal/jsonunits"
)

// TestWorkerReplySaysItsUnits: the decode child's reply names its units.
func TestWorkerReplySaysItsUnits(t *testing.T) {
	for _, p := range jsonunits.Check(nil, workerReply{}) {
		t.Error(p)
	}
}
