package cpu

import (
	"math"
	"strings"
	"testing"

	"proscenium/engine/drama3"
)

// TestPromptRowsFeedback: a reference prompt's audio rows carry the
// feedback-row formula of their codes, (E_text[<|semantic:c0|>] + Σ_i
// E_cb_i[c_i]) / sqrt(codebooks + 1), computed here in float64 from the
// tables; text rows carry their token.
func TestPromptRowsFeedback(t *testing.T) {
	const D, vocab = 6, 40
	entries := []int{5, 3, 3}
	text := make([]float32, vocab*D)
	for i := range text {
		text[i] = float32(math.Sin(float64(i) * 0.7))
	}
	books := make([][]float32, len(entries))
	for b, n := range entries {
		books[b] = make([]float32, n*D)
		for i := range books[b] {
			books[b][i] = float32(math.Cos(float64(i*(b+2)) * 0.3))
		}
	}
	semTok := []int{30, 31, 32, 33, 34}
	h := &drama3.Heads{Dim: D, SemanticTokens: semTok}
	feedback := func(dst []float32, codes []int) error { return h.FeedbackRow(dst, codes, text, books) }
	p := drama3.Prompt{{Token: 7}, {Token: 32, Codes: []int{2, 1, 0}}, {Token: 34, Codes: []int{4, 2, 2}}, {Token: 9}}
	rows, err := PromptRows(p, D, feedback)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].Token != 7 || rows[0].Embedding != nil || rows[3].Token != 9 || rows[3].Embedding != nil {
		t.Fatalf("text rows: %+v", rows)
	}
	for _, i := range []int{1, 2} {
		codes := p[i].Codes
		if rows[i].Token != p[i].Token || len(rows[i].Embedding) != D {
			t.Fatalf("row %d: %+v", i, rows[i])
		}
		for d := 0; d < D; d++ {
			want := float64(text[semTok[codes[0]]*D+d])
			for b, c := range codes {
				want += float64(books[b][c*D+d])
			}
			want /= math.Sqrt(float64(len(codes) + 1))
			if got := float64(rows[i].Embedding[d]); math.Abs(got-want) > 1e-6 {
				t.Errorf("row %d dim %d: %g, want %g", i, d, got, want)
			}
		}
	}
	p[1].Codes = []int{2, 3, 0} // codebook 1 has 3 entries
	if _, err := PromptRows(p, D, feedback); err == nil || !strings.Contains(err.Error(), "prompt row 1: feedback: code 3 outside codebook 1") {
		t.Errorf("bad code: %v", err)
	}
}
