//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// TestBackboneStepPDLOrder runs the same prefills and steps with
// programmatic dependent launch on (the default) and off, under both
// policies, and wants the same bits. The kernels and their order are the
// same either way; PDL only lets a kernel start before the one in front of
// it has finished, its griddepcontrol.wait holding back what reads their
// output. A difference is a kernel that reads an earlier kernel's output
// before its wait (step27c: ptxas had moved the fast combine's load of a
// routing weight above the wait, so the one-row step combined the previous
// layer's weight while the routed gate·up still wrote this one's: fast
// steps 0.5 off the CPU, exact untouched). Checked: the one-take step, the
// fused step under fast, and the B-row step of two takes.
// kernels/pdl_sass_test.go checks the compiled kernels for such loads; this
// checks what the device does with them.
func TestBackboneStepPDLOrder(t *testing.T) {
	if !dev.Info.PDL {
		t.Skip("no programmatic dependent launch on this device: nothing to compare")
	}
	eachNumerics(t, testBackboneStepPDLOrder)
}

func testBackboneStepPDLOrder(t *testing.T) {
	for _, dir := range backboneCheckpoints(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r := newRand(t)
			ck := loadCheckpoint(t, dir)
			tc := &ck.Config.Text
			H := tc.HiddenSize
			rows, _ := testRows(r, 2*(12+16), tc.VocabSize, H)
			prompts := [2][]BackboneRow{rows[:12], rows[12:24]}
			steps, rowSteps := rows[24:40], rows[40:]
			// run loads a backbone with two take slots under PDL on or off,
			// prefills both, steps slot 0 alone, then both slots as B-row
			// steps; it returns the one-take steps' rows, then the B-row ones.
			run := func(pdl, fused bool) []float32 {
				dev.SetPDL(pdl)
				defer dev.SetPDL(true)
				gb, err := LoadBackboneSlots(dev, ck, 64, 2, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer gb.Close()
				gb.SetFused(fused)
				for s, p := range prompts {
					if err := gb.UseSlot(s); err != nil {
						t.Fatal(err)
					}
					if _, err := gb.Prefill(p); err != nil {
						t.Fatal(err)
					}
				}
				if err := gb.UseSlot(0); err != nil {
					t.Fatal(err)
				}
				var out []float32
				for _, row := range steps {
					h, err := gb.Step(row)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, h...)
				}
				for i := 0; i+1 < len(rowSteps); i += 2 {
					h, err := gb.StepRows(rowSteps[i:i+2], []int{0, 1})
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, h...)
				}
				return out
			}
			for _, fused := range []bool{false, true} {
				if fused && dev.Numerics.Exact() {
					continue // the fused kernels are fast-only
				}
				what := map[bool]string{false: "steps", true: "fused steps"}[fused]
				with, without := run(true, fused), run(false, fused)
				if len(with) != len(without) {
					t.Fatalf("%s: %d values with PDL, %d without", what, len(with), len(without))
				}
				first, worst := -1, 0.0
				for i := range with {
					if math.Float32bits(with[i]) != math.Float32bits(without[i]) {
						if first < 0 {
							first = i / H
						}
						worst = max(worst, math.Abs(float64(with[i]-without[i])))
					}
				}
				if first >= 0 {
					t.Errorf("%s with PDL differ from the same launches without it, first at row %d (%s), by up to %.3g",
						what, first, pdlRowName(first, len(steps)), worst)
				} else {
					t.Logf("%s: %d rows, the same bits with and without PDL", what, len(with)/H)
				}
			}
		})
	}
}

// pdlRowName says which of testBackboneStepPDLOrder's rows row is.
func pdlRowName(row, steps int) string {
	if row < steps {
		return fmt.Sprintf("one-take step %d", row)
	}
	return fmt.Sprintf("B-row step %d, take %d", (row-steps)/2, (row-steps)%2)
}
