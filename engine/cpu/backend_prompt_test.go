package cpu

import (
	"context"
	"math"
	"strings"
	"testing"

	"proscenium/engine/drama3"
)

// TestBeginPromptIsTeacherForcing: a prompt of text rows then reference
// frames leaves the backend where text rows then those frames forced one by
// one (TowerShared, TowerResidual, Advance) leave it: the same semantic
// logits, and the same logits for every codebook of the next frame (so the
// tower's caches agree too).
func TestBeginPromptIsTeacherForcing(t *testing.T) {
	m := newTestModel(t)
	text := []int{3, 14, 15, 92}
	frames := [][]int{{4, 1, 8, 2}, {19, 0, 3, 7}, {0, 5, 5, 1}}
	next := []int{7, 2, 6, 3}
	entries := []int{20, 9, 9, 9}

	// The frame after the prompt, forced, with every logits vector kept.
	after := func(b *Backend, semantic []float32) [][]float32 {
		out := [][]float32{append([]float32(nil), semantic...)}
		if err := b.TowerShared(next[0]); err != nil {
			t.Fatal(err)
		}
		for j := 1; j < len(next); j++ {
			l := make([]float32, entries[j])
			if err := b.TowerResidual(j, next[j-1], l); err != nil {
				t.Fatal(err)
			}
			out = append(out, l)
		}
		return out
	}

	forced := m.backend(t)
	sem := make([]float32, 21)
	if err := forced.Begin(context.Background(), text, sem); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := forced.TowerShared(f[0]); err != nil {
			t.Fatal(err)
		}
		for j := 1; j < len(f); j++ {
			if err := forced.TowerResidual(j, f[j-1], make([]float32, entries[j])); err != nil {
				t.Fatal(err)
			}
		}
		if err := forced.Advance(f, sem); err != nil {
			t.Fatal(err)
		}
	}
	want := after(forced, sem)

	p := drama3.TextPrompt(text)
	for _, f := range frames {
		p = append(p, drama3.PromptRow{Token: 50 + f[0], Codes: f})
	}
	b := m.backend(t)
	got := make([]float32, 21)
	if err := b.BeginPrompt(context.Background(), p, got); err != nil {
		t.Fatal(err)
	}
	have := after(b, got)
	for cb := range want {
		for i := range want[cb] {
			if d := math.Abs(float64(have[cb][i] - want[cb][i])); d > 1e-4*(1+math.Abs(float64(want[cb][i]))) {
				t.Fatalf("codebook %d logit %d: %g after BeginPrompt, %g teacher-forced", cb, i, have[cb][i], want[cb][i])
			}
		}
	}

	// Text after the frames (the reference prompt's user turn) is fine; a
	// prompt cannot start with a frame.
	if err := b.BeginPrompt(context.Background(), append(p, drama3.TextPrompt([]int{65, 35})...), got); err != nil {
		t.Errorf("text after frames: %v", err)
	}
	if err := b.BeginPrompt(context.Background(), p[len(text):], got); err == nil || !strings.Contains(err.Error(), "cannot start with an audio row") {
		t.Errorf("leading frame: %v", err)
	}
	bad := append(drama3.Prompt(nil), p...)
	bad[len(text)] = drama3.PromptRow{Token: 50, Codes: []int{0, 9, 0, 0}}
	if err := b.BeginPrompt(context.Background(), bad, got); err == nil || !strings.Contains(err.Error(), "outside codebook 1") {
		t.Errorf("bad code: %v", err)
	}
}
