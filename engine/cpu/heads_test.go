package cpu

import (
	"math"
	"strings"
	"testing"
)

func TestFeedbackRowHandComputed(t *testing.T) {
	// D = 2, two codebooks of 3 and 2 entries, vocabulary of 4 with
	// <|semantic:c|> at ids 1, 2, 3.
	h := &AudioHeads{
		Dim:            2,
		SemanticTokens: []int{1, 2, 3},
		TextEmbed:      []float32{0, 0, 1, 2, 3, 4, 5, 6},
		Codebooks: [][]float32{
			{10, 20, 30, 40, 50, 60},
			{0.5, -0.5, 7, 8},
		},
	}
	dst := make([]float32, 2)
	if err := h.FeedbackRow(dst, []int{2, 1}); err != nil {
		t.Fatal(err)
	}
	// (E_text[3] + E0[2] + E1[1]) / sqrt(3) = (5+50+7, 6+60+8) / sqrt(3).
	s3 := float32(math.Sqrt(3))
	want := []float32{(5 + 50 + 7) / s3, (6 + 60 + 8) / s3}
	if dst[0] != want[0] || dst[1] != want[1] {
		t.Fatalf("feedback row %v, want %v", dst, want)
	}
	for _, bad := range [][]int{{3, 0}, {0, 2}, {-1, 0}, {0}} {
		if err := h.FeedbackRow(dst, bad); err == nil {
			t.Errorf("codes %v accepted", bad)
		}
	}
}

func TestSemanticLogits(t *testing.T) {
	h := &AudioHeads{Dim: 2, SemanticTokens: []int{0, 1}, Semantic: []float32{1, 0, 0, 1, 2, -1}}
	dst := make([]float32, 3)
	h.SemanticLogits(dst, []float32{3, 5})
	if want := []float32{3, 5, 1}; dst[0] != want[0] || dst[1] != want[1] || dst[2] != want[2] {
		t.Fatalf("logits %v, want %v", dst, want)
	}
}

type tokenMap map[string]int

func (m tokenMap) TokenID(s string) (int, bool) { id, ok := m[s]; return id, ok }

func TestSemanticTokenIDs(t *testing.T) {
	ids, err := SemanticTokenIDs(tokenMap{"<|semantic:0|>": 7, "<|semantic:1|>": 9}, 2)
	if err != nil || ids[0] != 7 || ids[1] != 9 {
		t.Fatalf("ids %v, err %v", ids, err)
	}
	if _, err := SemanticTokenIDs(tokenMap{"<|semantic:0|>": 7}, 2); err == nil || !strings.Contains(err.Error(), "<|semantic:1|>") {
		t.Fatalf("missing token: error %v", err)
	}
}
