package cuda

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDoesNotReachTheCPUBackend: engine/cuda and its subpackages never reach
// engine/cpu through any chain of imports (tests excluded), in the worker's
// build (-tags cuda) or without the tag. What the two backends share (the
// codec plan, the encoding, the RoPE tables) is engine/drama3's; the worker
// (cmd/proscenium-gpu) hands the GPU codec its plan. (This is a row of the
// import rules; it moves into tools/layers' table when that lands.)
func TestDoesNotReachTheCPUBackend(t *testing.T) {
	if _, err := os.Stat("../../go.mod"); err != nil {
		t.Skip("not in the source tree (a carried test binary)")
	}
	const forbidden = "proscenium/engine/cpu"
	for _, tags := range []string{"", "cuda"} {
		// -e: the cuda-tagged kernels package embeds build outputs that a
		// fresh clone lacks; its imports are listed all the same.
		cmd := exec.Command("go", "list", "-e", "-deps", "-tags", tags, "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./engine/cuda/...")
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v\n%s", tags, err, stderr.String())
		}
		imports := map[string][]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(l)
			imports[f[0]] = f[1:]
		}
		// Walk from the engine/cuda packages, remembering how each package
		// was reached, to name the chain.
		via := map[string]string{}
		var queue []string
		for p := range imports {
			if p == "proscenium/engine/cuda" || strings.HasPrefix(p, "proscenium/engine/cuda/") {
				via[p] = ""
				queue = append(queue, p)
			}
		}
		if len(queue) < 3 {
			t.Fatalf("-tags %q: go list found the engine/cuda packages %v", tags, queue)
		}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, q := range imports[p] {
				if _, seen := via[q]; !seen {
					via[q] = p
					queue = append(queue, q)
				}
			}
		}
		if _, reached := via[forbidden]; reached {
			chain := []string{forbidden}
			for p := via[forbidden]; p != ""; p = via[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			t.Errorf("-tags %q: engine/cuda reaches engine/cpu: %s (put what both backends need in engine/drama3)", tags, strings.Join(chain, " → "))
		}
	}
}
